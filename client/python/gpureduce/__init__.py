"""Python client for gpureduce, the gRPC service that reduces arrays as NumPy does: sum, prod,
min, max, mean, var, std, their nan forms and the arg ops, of float32, float16, bfloat16,
float64, int32 and int64 arrays (NumPy arrays, PyTorch tensors, CUDA arrays by IPC).

    import numpy, gpureduce
    client = gpureduce.Client("127.0.0.1:50051")
    x = numpy.arange(10, dtype=numpy.int32)
    client.reduce(x, "sum")                            # numpy.int64(45), as numpy.sum answers
    total, spread = client.reduce(x, ops=["sum", "std"], ddof=1)   # one read of the data
    client.reduce(x.reshape(2, 5), "sum", axis=1)     # array([10, 35]), as numpy.sum answers
    client.reduce_many([x, x[:3]], "max")             # [numpy.int32(9), numpy.int32(2)]
    result = client.reduce_result(x, "mean")           # the whole answer: kernel, timing, ...
    print(result.scalar, result.kernel, result.timing["server_us"])

    with client.shared_memory(x) as region:   # a server on this host reads x in place
        print(region.reduce("max"))

The stubs under gpureduce.v1 are generated from proto/gpureduce/v1/reduce.proto when the package
is built (`pip install client/python`, or the CMake build's build/<preset>/python).
"""

from gpureduce._cuda import CudaError
from gpureduce import _dtypes
from gpureduce._dtypes import OPS
from gpureduce.client import (Client, Error, OpResult, OverflowWarning, Region, RegionList,
                              Result)
from gpureduce.shared_memory import SharedRegion

DTYPES = tuple(_dtypes.DTYPES)  # the element types it reduces, by NumPy's names

try:
    from importlib.metadata import PackageNotFoundError, version as _version
    __version__ = _version("gpureduce")
except PackageNotFoundError:  # not installed: the CMake build's tree (PYTHONPATH)
    __version__ = "0.1.0"

__all__ = ["Client", "CudaError", "DTYPES", "Error", "OPS", "OpResult", "OverflowWarning",
           "Region", "RegionList", "Result", "SharedRegion", "__version__"]
