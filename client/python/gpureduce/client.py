"""gpureduce.Client: reductions of NumPy float32 arrays of any size, over plaintext or TLS, and of
arrays in shared memory (system or CUDA) that a server on the same host reads in place."""

from __future__ import annotations

import dataclasses
import os
from typing import Iterator, Optional

import grpc
import numpy

from gpureduce import _cuda
from gpureduce.shared_memory import SharedRegion
from gpureduce.v1 import reduce_pb2, reduce_pb2_grpc

# The ops by the names the CLI and the server's messages use.
OPS = {
    "sum": reduce_pb2.SUM,
    "prod": reduce_pb2.PROD,
    "min": reduce_pb2.MIN,
    "max": reduce_pb2.MAX,
    "mean": reduce_pb2.MEAN,
    "sum_squares": reduce_pb2.SUM_SQUARES,
    "argmin": reduce_pb2.ARGMIN,
    "argmax": reduce_pb2.ARGMAX,
}

# Arrays up to one chunk go in one Reduce message; larger ones are streamed in chunks of this
# size, as the CLI does (the server's default --max-chunk-bytes is 16 MiB).
DEFAULT_CHUNK_BYTES = 1 << 20


class Error(Exception):
    """The server (or the connection) answered with a gRPC error: `code` and `message`."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message


@dataclasses.dataclass
class Result:
    """A reduction's answer: `index` is -1 except for argmin and argmax."""

    value: float
    index: int
    count: int
    kernel: str
    backend: str
    device: str
    timing: dict  # queue_us, h2d_us, kernel_us, d2h_us, server_us, bytes, chunks, ...


@dataclasses.dataclass
class Region:
    """A registered shared-memory region, as the server describes it."""

    name: str
    kind: str               # "system" or "cuda"
    key: str                # system: the POSIX shared-memory object's name ("/...")
    device_id: int          # cuda: the device; system: -1
    offset: int             # where the region starts in the object (or the allocation)
    byte_size: int
    requests_in_flight: int
    register_us: float      # what registering it cost the server (mapping, pinning, opening)

    @classmethod
    def from_message(cls, message) -> "Region":
        kind = {reduce_pb2.SharedMemoryRegion.SYSTEM: "system",
                reduce_pb2.SharedMemoryRegion.CUDA: "cuda"}.get(message.kind, "unspecified")
        return cls(name=message.name, kind=kind, key=message.key, device_id=message.device_id,
                   offset=message.offset, byte_size=message.byte_size,
                   requests_in_flight=message.requests_in_flight,
                   register_us=message.register_us)


class RegionList(list):
    """The registered regions (a list of Region) and the server's limits on them."""

    def __init__(self, regions, max_regions: int, max_total_bytes: int, total_bytes: int):
        super().__init__(regions)
        self.max_regions = max_regions
        self.max_total_bytes = max_total_bytes
        self.total_bytes = total_bytes


def _object_bytes(key: str) -> int:
    """The size of POSIX shared-memory object `key` ("/name"), which Linux keeps in /dev/shm."""
    if not key.startswith("/") or "/" in key[1:] or key in ("/", "/.", "/.."):
        raise ValueError(f"{key!r} is not a POSIX shared-memory name (\"/\" and a name)")
    return os.stat("/dev/shm" + key).st_size


def _read(path: Optional[str]) -> Optional[bytes]:
    if path is None:
        return None
    with open(path, "rb") as f:
        return f.read()


def _as_float32(array) -> numpy.ndarray:
    if isinstance(array, numpy.ndarray) and array.dtype != numpy.float32:
        raise TypeError(
            f"gpureduce reduces float32 arrays, not {array.dtype}; convert with "
            "array.astype(numpy.float32) if the loss of precision is acceptable")
    # Any shape: reduced as the flat array in C order, without a copy when it is contiguous.
    return numpy.ascontiguousarray(array, dtype=numpy.float32).reshape(-1)


class Client:
    """A connection to a gpureduce server.

    `target` is HOST:PORT, or any gRPC target: several servers (ipv4:HOST1:PORT,HOST2:PORT,
    or dns:///NAME:PORT) take calls round robin. For TLS give `tls_ca` (the PEM file of the CA
    that signed the server's certificate; None with `tls=True` trusts the system's CAs), and for
    mutual TLS `tls_cert` and `tls_key`; `tls_server_name` checks the certificate for another
    name than the target's host. `token` (or `token_file`) is the bearer token sent with every
    call to a server started with --auth-token-file.
    """

    def __init__(self, target: str = "127.0.0.1:50051", *, tls: bool = False,
                 tls_ca: Optional[str] = None, tls_cert: Optional[str] = None,
                 tls_key: Optional[str] = None, tls_server_name: Optional[str] = None,
                 token: Optional[str] = None, token_file: Optional[str] = None,
                 chunk_bytes: int = DEFAULT_CHUNK_BYTES):
        if (tls_cert is None) != (tls_key is None):
            raise ValueError("tls_cert and tls_key go together")
        if chunk_bytes < 4:
            raise ValueError("chunk_bytes must hold at least one float32")
        # Round robin: a target may name several servers (ipv4:A:P,B:P or a DNS name).
        options = [("grpc.lb_policy_name", "round_robin"),
                   ("grpc.max_receive_message_length", -1),
                   ("grpc.max_send_message_length", -1)]
        if tls or tls_ca is not None or tls_cert is not None:
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_read(tls_ca), private_key=_read(tls_key),
                certificate_chain=_read(tls_cert))
            if tls_server_name is not None:
                options.append(("grpc.ssl_target_name_override", tls_server_name))
            self._channel = grpc.secure_channel(target, credentials, options=options)
        else:
            self._channel = grpc.insecure_channel(target, options=options)
        if token_file is not None:
            with open(token_file, encoding="utf-8") as f:
                lines = [line.strip() for line in f]
            lines = [line for line in lines if line and not line.startswith("#")]
            if not lines:
                raise ValueError(f"the token file {token_file} holds no token")
            token = lines[0]
        self._metadata = [("authorization", f"Bearer {token}")] if token else []
        self._stub = reduce_pb2_grpc.ReducerStub(self._channel)
        self._chunk_elements = chunk_bytes // 4

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def reduce(self, array, op: str = "sum", kernel: str = "auto", *,
               timeout: Optional[float] = None) -> Result:
        """Reduces `array` (float32, any shape, any size) with `op` on `kernel`.

        Arrays larger than one chunk are streamed; the server is told the element count, so an
        input cut short is refused rather than reduced. A CUDA array (any object with
        `__cuda_array_interface__`, float32 and C-contiguous) is not sent at all: it is registered
        by its CUDA IPC handle, reduced where it is, and unregistered (the server must run on
        this host, with --allow-shared-memory, on the CUDA backend). Raises Error for the
        server's refusals (the code and message say what was wrong), ValueError for an unknown
        op, TypeError for an array that is not float32, CudaError where the CUDA driver is
        missing or refuses.
        """
        if op not in OPS:
            raise ValueError(f"unknown op {op!r}; use one of {', '.join(OPS)}")
        if _cuda.is_cuda_array(array):
            if _cuda.array_view(array).count == 0:  # nothing to share: an empty request says it
                return self.reduce(numpy.zeros(0, numpy.float32), op, kernel, timeout=timeout)
            with self.shared_memory(array) as region:
                return region.reduce(op, kernel, timeout=timeout)
        flat = _as_float32(array)
        spec = reduce_pb2.ReduceSpec(op=OPS[op], kernel=kernel, expected_count=flat.size)
        try:
            if flat.size <= self._chunk_elements:
                response = self._stub.Reduce(
                    reduce_pb2.ReduceRequest(spec=spec, data=flat.tobytes()),
                    timeout=timeout, metadata=self._metadata)
            else:
                response = self._stub.ReduceStream(self._chunks(spec, flat), timeout=timeout,
                                                   metadata=self._metadata)
        except grpc.RpcError as error:
            raise Error(error.code(), error.details()) from None
        return self._result(response)

    def kernels(self) -> list:
        """The kernels the server runs, as the server describes them (ListKernels)."""
        return list(self._call(self._stub.ListKernels, reduce_pb2.ListKernelsRequest()).kernels)

    def info(self, *, timeout: Optional[float] = None):
        """The server's description of itself (GetServerInfo): version, backend, devices,
        limits, and `shared_memory`, whether it accepts shared-memory regions."""
        return self._call(self._stub.GetServerInfo, reduce_pb2.GetServerInfoRequest(), timeout)

    # -- shared memory (the server must run on this host, with --allow-shared-memory) ----------

    def shared_memory(self, source, *, offset: int = 0, byte_size: Optional[int] = None,
                      name: Optional[str] = None,
                      device_id: Optional[int] = None) -> SharedRegion:
        """A context manager that registers `source` with the server for the `with` block:

            with client.shared_memory(x) as region:
                total = region.reduce("sum")
                smallest = region.reduce("min")

        `source` is a float32 array (any shape; copied once into a new POSIX shared-memory
        segment, which is unlinked on leaving the block), an existing
        `multiprocessing.shared_memory.SharedMemory` (registered from byte `offset`, `byte_size`
        bytes or the whole floats to its end; the caller keeps owning it), or a CUDA array
        (`__cuda_array_interface__`, float32, C-contiguous: registered by its CUDA IPC handle on
        its device, or `device_id` where the server numbers the devices differently). `name` is
        the region's name in the server (default: a unique one). The block yields a
        SharedRegion; its `reduce(op, kernel)` returns the same Result as `reduce`.
        """
        return SharedRegion(self, source, offset=offset, byte_size=byte_size, name=name,
                            device_id=device_id)

    def register_system_shared_memory(self, name: str, key: str, offset: int = 0,
                                      byte_size: Optional[int] = None, *,
                                      timeout: Optional[float] = None,
                                      unlink_key: bool = False) -> Region:
        """Registers POSIX shared-memory object `key` ("/" and its name, as shm_open takes it;
        for a SharedMemory `shm`, "/" + shm.name) as region `name`: `byte_size` bytes from
        `offset` (both multiples of 4), by default the whole floats from `offset` to its end.
        `unlink_key`: the server removes the name from /dev/shm once it has mapped the object
        (for an object made only to lend it; the memory lives on while registered)."""
        if byte_size is None:
            byte_size = max(_object_bytes(key) - offset, 0) // 4 * 4
        request = reduce_pb2.RegisterSystemSharedMemoryRequest(
            name=name, key=key, offset=offset, byte_size=byte_size, unlink_key=unlink_key)
        return Region.from_message(
            self._call(self._stub.RegisterSystemSharedMemory, request, timeout).region)

    def register_cuda_shared_memory(self, name: str, raw_handle: bytes, device_id: int,
                                    offset: int, byte_size: int, *,
                                    timeout: Optional[float] = None) -> Region:
        """Registers `byte_size` bytes from `offset` of the device allocation whose 64-byte CUDA
        IPC handle (cudaIpcGetMemHandle) is `raw_handle`, on device `device_id`, as region
        `name`. `shared_memory(cuda_array)` finds all of these itself."""
        request = reduce_pb2.RegisterCudaSharedMemoryRequest(
            name=name, raw_handle=bytes(raw_handle), device_id=device_id, offset=offset,
            byte_size=byte_size)
        return Region.from_message(
            self._call(self._stub.RegisterCudaSharedMemory, request, timeout).region)

    def list_shared_memory(self, *, timeout: Optional[float] = None) -> RegionList:
        """The regions registered now (every client's), with the server's limits on them."""
        response = self._call(self._stub.ListSharedMemory, reduce_pb2.ListSharedMemoryRequest(),
                              timeout)
        return RegionList([Region.from_message(r) for r in response.regions],
                          response.max_regions, response.max_total_bytes, response.total_bytes)

    def unregister_shared_memory(self, name: Optional[str] = None, *, all: bool = False,
                                 timeout: Optional[float] = None) -> list:
        """Unregisters region `name`, or with `all=True` every region (of every client); returns
        the names unregistered. A request reading a region keeps it until the request ends."""
        # pylint: disable=redefined-builtin
        if (name is None) == (not all):
            raise ValueError("name a region or pass all=True, not both")
        request = reduce_pb2.UnregisterSharedMemoryRequest(name=name or "", all=all)
        return list(self._call(self._stub.UnregisterSharedMemory, request, timeout).names)

    def reduce_shared(self, region, offset: int = 0, byte_size: Optional[int] = None,
                      op: str = "sum", kernel: str = "auto", *,
                      timeout: Optional[float] = None) -> Result:
        """Reduces `byte_size` bytes from `offset` of registered region `region` (its name, or a
        Region, whose size is then the default) in place on the server."""
        if op not in OPS:
            raise ValueError(f"unknown op {op!r}; use one of {', '.join(OPS)}")
        if isinstance(region, Region):
            if byte_size is None:
                byte_size = region.byte_size - offset
            region = region.name
        if byte_size is None:
            raise ValueError("byte_size is needed where the region is given by name")
        if offset < 0 or byte_size < 0:
            raise ValueError(f"offset ({offset}) and byte_size ({byte_size}) cannot be negative")
        spec = reduce_pb2.ReduceSpec(op=OPS[op], kernel=kernel,
                                     expected_count=byte_size // 4 if byte_size % 4 == 0 else 0)
        request = reduce_pb2.ReduceRequest(
            spec=spec, shared_memory=reduce_pb2.SharedMemoryRef(region=region, offset=offset,
                                                                byte_size=byte_size))
        return self._result(self._call(self._stub.Reduce, request, timeout))

    def _call(self, method, request, timeout: Optional[float] = None):
        try:
            return method(request, timeout=timeout, metadata=self._metadata)
        except grpc.RpcError as error:
            raise Error(error.code(), error.details()) from None

    def _chunks(self, spec, flat: numpy.ndarray) -> Iterator[reduce_pb2.ReduceChunk]:
        for begin in range(0, flat.size, self._chunk_elements):
            chunk = reduce_pb2.ReduceChunk(data=flat[begin:begin + self._chunk_elements].tobytes())
            if begin == 0:
                chunk.spec.CopyFrom(spec)  # the spec rides in the first chunk only
            yield chunk

    @staticmethod
    def _result(response) -> Result:
        t = response.timing
        timing = {field.name: getattr(t, field.name) for field in t.DESCRIPTOR.fields}
        return Result(value=response.value, index=response.index, count=response.count,
                      kernel=response.kernel, backend=response.backend, device=response.device,
                      timing=timing)
