"""Python client for gpureduce, the gRPC service that reduces float32 arrays.

    import numpy, gpureduce
    client = gpureduce.Client("127.0.0.1:50051")
    result = client.reduce(numpy.arange(10, dtype=numpy.float32), op="sum")
    print(result.value, result.kernel, result.timing["server_us"])

The stubs under gpureduce.v1 are generated from proto/gpureduce/v1/reduce.proto at build time
(client/python/CMakeLists.txt); the build writes the importable package to
build/<preset>/python.
"""

from gpureduce.client import OPS, Client, Error, Result

__all__ = ["Client", "Error", "OPS", "Result"]
