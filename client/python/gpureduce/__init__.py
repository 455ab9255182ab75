"""Python client for gpureduce, the gRPC service that reduces float32 arrays.

    import numpy, gpureduce
    client = gpureduce.Client("127.0.0.1:50051")
    x = numpy.arange(10, dtype=numpy.float32)
    result = client.reduce(x, op="sum")
    print(result.value, result.kernel, result.timing["server_us"])

    with client.shared_memory(x) as region:   # a server on this host reads x in place
        print(region.reduce("max").value)

The stubs under gpureduce.v1 are generated from proto/gpureduce/v1/reduce.proto at build time
(client/python/CMakeLists.txt); the build writes the importable package to
build/<preset>/python.
"""

from gpureduce._cuda import CudaError
from gpureduce.client import OPS, Client, Error, Region, RegionList, Result
from gpureduce.shared_memory import SharedRegion

__all__ = ["Client", "CudaError", "Error", "OPS", "Region", "RegionList", "Result",
           "SharedRegion"]
