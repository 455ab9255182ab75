"""gpureduce.Client: NumPy's reductions (sum, mean, var, the nan forms, ...) of NumPy arrays and
PyTorch tensors of float32, float16, bfloat16, float64, int32 and int64, of any size, over
plaintext or TLS, and of arrays in shared memory (system or CUDA) that a server on the same host
reads in place."""

from __future__ import annotations

from typing import Iterator, Optional, Sequence

import grpc
import numpy

from gpureduce import _arrays, _cuda, _dtypes, _output, _requests, _results
from gpureduce._local import LocalRoute
# OpResult, OverflowWarning: re-exported, as `from gpureduce.client import ...` finds them.
from gpureduce._results import Error, OpResult, OverflowWarning, Result  # noqa: F401
# Region, RegionList: re-exported likewise.
from gpureduce._regions import Region, RegionList, object_bytes
from gpureduce.shared_memory import SharedRegion
from gpureduce.v1 import reduce_pb2, reduce_pb2_grpc

OPS = _dtypes.OPS  # the op names, numpy's (gpureduce.OPS)

# Arrays up to one chunk go in one Reduce message; larger ones are streamed in chunks of this
# many bytes, as the CLI does (the server's default --max-chunk-bytes is 16 MiB). A chunk may end
# inside an element: the server joins it with the next.
DEFAULT_CHUNK_BYTES = 1 << 20


def _read(path: Optional[str]) -> Optional[bytes]:
    if path is None:
        return None
    with open(path, "rb") as f:
        return f.read()


class Client:
    """A connection to a gpureduce server.

    `target` is HOST:PORT, or any gRPC target: several servers (ipv4:HOST1:PORT,HOST2:PORT,
    or dns:///NAME:PORT) take calls round robin. For TLS give `tls_ca` (the PEM file of the CA
    that signed the server's certificate; None with `tls=True` trusts the system's CAs), and for
    mutual TLS `tls_cert` and `tls_key`; `tls_server_name` checks the certificate for another
    name than the target's host. `token` (or `token_file`) is the bearer token sent with every
    call to a server started with --auth-token-file. `target` may be `unix:PATH`, the socket of
    a server on this host started with `--listen-unix=PATH`; a plaintext client of such a server
    sends its shared-memory calls there itself (`shared_memory_target`).
    """

    def __init__(self, target: str = "127.0.0.1:50051", *, tls: bool = False,
                 tls_ca: Optional[str] = None, tls_cert: Optional[str] = None,
                 tls_key: Optional[str] = None, tls_server_name: Optional[str] = None,
                 token: Optional[str] = None, token_file: Optional[str] = None,
                 chunk_bytes: int = DEFAULT_CHUNK_BYTES):
        if (tls_cert is None) != (tls_key is None):
            raise ValueError("tls_cert and tls_key go together")
        if chunk_bytes < 1:
            raise ValueError("chunk_bytes must be at least 1")
        # Round robin: a target may name several servers (ipv4:A:P,B:P or a DNS name).
        options = [("grpc.lb_policy_name", "round_robin"),
                   ("grpc.max_receive_message_length", -1),
                   ("grpc.max_send_message_length", -1)]
        secure = tls or tls_ca is not None or tls_cert is not None
        if secure:
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
        self._local = LocalRoute(target, self._stub, self._metadata, options, secure)
        # Reduce and ReduceStream with the messages serialized here (_requests.encode_message):
        # the payload goes from the array's memory into the message in one copy.
        service = "/" + reduce_pb2.DESCRIPTOR.services_by_name["Reducer"].full_name
        self._reduce_raw = self._channel.unary_unary(
            service + "/Reduce", request_serializer=None,
            response_deserializer=reduce_pb2.ReduceResponse.FromString)
        self._reduce_stream_raw = self._channel.stream_unary(
            service + "/ReduceStream", request_serializer=None,
            response_deserializer=reduce_pb2.ReduceResponse.FromString)
        self._chunk_bytes = chunk_bytes

    def close(self) -> None:
        self._local.close()
        self._channel.close()

    @property
    def shared_memory_target(self) -> str:
        """Where this client's shared-memory calls go: `unix:PATH` where the server listens on a
        Unix socket this process reaches, else the client's target (asks the server once)."""
        return self._local.target()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def reduce(self, array, op: Optional[str] = None, ddof: float = 0, dtype=None, *,
               ops: Optional[Sequence[str]] = None, input_dtype: Optional[str] = None,
               kernel: str = "auto", timeout: Optional[float] = None, axis=None,
               keepdims: bool = False, out=None):
        """Reduces `array` as NumPy's function `op` would (`"sum"` when neither `op` nor `ops` is
        given) and returns a NumPy scalar of NumPy's result dtype: `numpy.sum` of int32 is int64,
        `mean` of integers float64, an arg op's answer its int64 index, a float16 sum float16.
        With `ops=[...]` it returns a tuple of such scalars, one per op in order, from one read
        of the data. `Client.reduce_result` takes the same arguments and returns the whole
        answer (every op's, the kernel, the timing).

        `array`: a NumPy array of float32, float16, float64, int32 or int64 (any shape, reduced
        flat in C order unless `axis` says otherwise; sent as it is, a non-contiguous one made
        contiguous once); bfloat16 as a uint16 array of its bits with `input_dtype="bfloat16"`
        (or an ml_dtypes bfloat16 array); a PyTorch tensor of those dtypes (CPU tensors are read
        without a copy); a CUDA array (`__cuda_array_interface__`, C-contiguous; a CUDA tensor)
        is reduced in place by CUDA IPC (the server must run on this host on the CUDA backend, with
        --allow-shared-memory). Other dtypes raise TypeError naming these.

        `ddof`: var and std (and their nan forms) divide by `count - ddof`, as NumPy's (past
        the count: inf or NaN, as NumPy answers). `dtype`: the result's type, as NumPy's
        `dtype=` argument (`numpy.sum(x, dtype=numpy.float64)`): the server's exact result is
        rounded once to it (an integer result wraps as NumPy's would; a float result to an
        integer dtype is a TypeError: NumPy would truncate each element first). The arg ops
        ignore it.

        `axis` and `keepdims` as NumPy's: None, an int or a tuple of ints (negative ones count
        from the end; arg ops take an int or None). Unless `axis` is None and `keepdims` False,
        the answer is a NumPy array of NumPy's result shape and dtype (a NumPy scalar where that
        shape is ()), one per op with `ops`; the server is sent the array's shape and axes.
        `axis=()` reduces nothing (each element its own result, as NumPy's). NumPy's refusals
        are raised before anything is sent: AxisError (a ValueError) for an axis out of range,
        ValueError for a repeated one, TypeError for a tuple given to an arg op.

        `out` (with `axis` or `keepdims`): a region from `shared_memory(..., writable=True)`, or
        (region, offset in bytes), for the server to write the results into, each op's array at
        the next multiple of 8; the answers are then NumPy views of it, not copies (bfloat16
        results as their uint16 bits, a result of shape () as a 0-d array). No `dtype=` with it.

        An integer result that wrapped around (as NumPy's does) warns with OverflowWarning.
        Raises Error for the server's refusals (code and message say what was wrong; an empty
        array for an op without identity is INVALID_ARGUMENT), ValueError for an unknown op.
        """
        result = self.reduce_result(array, op, ddof, dtype, ops=ops, input_dtype=input_dtype,
                                    kernel=kernel, timeout=timeout, axis=axis,
                                    keepdims=keepdims, out=out, _stacklevel=3)
        return result.scalar if ops is None else result.values

    def reduce_result(self, array, op: Optional[str] = None, ddof: float = 0, dtype=None, *,
                      ops: Optional[Sequence[str]] = None, input_dtype: Optional[str] = None,
                      kernel: str = "auto", timeout: Optional[float] = None, axis=None,
                      keepdims: bool = False, out=None, _stacklevel: int = 2) -> Result:
        """`reduce`'s request, answered in full: a Result (its `scalar` or `values` are what
        `reduce` returns; `results` every op's OpResult; the kernel, backend and timing).

        Arrays larger than one chunk are streamed; the server is told the element count, so an
        input cut short is refused rather than reduced."""
        names, cast, ddof = _requests.request_args(op, ops, ddof, dtype)
        data = _dtypes.payload(array, input_dtype)
        layout = _arrays.for_axes(data.shape, axis, keepdims, names)  # NumPy's refusals here
        output = _output.for_request(out, layout, cast)
        if data.cuda:
            if _cuda.array_view(data.array).count == 0:  # nothing to share: an empty request
                data = _dtypes.Payload(data.dtype, numpy.zeros(0, _dtypes.DTYPES[data.dtype][2]),
                                       shape=data.shape)
            else:
                with self.shared_memory(array, input_dtype=input_dtype) as region:
                    return region.reduce_result(ops=names, ddof=ddof, dtype=cast, kernel=kernel,
                                                timeout=timeout, axis=axis, keepdims=keepdims,
                                                out=out, _stacklevel=_stacklevel + 1)
        if layout is not None:
            return self._reduce_array(data, layout, names, cast, ddof, kernel, timeout,
                                      _stacklevel + 1, output)
        spec = _requests.make_spec(names, data.dtype, ddof, kernel, data.count)
        response = self._send(spec, data, timeout)
        result = _results.typed_result(
            response, names, data.dtype, cast,
            lambda op: self._send(_requests.make_spec((op,), data.dtype, ddof, kernel, data.count),
                                  data, timeout))
        _results.warn_overflow(result, _stacklevel)
        return result

    def reduce_many(self, arrays, op: Optional[str] = None, ddof: float = 0, dtype=None, *,
                    ops: Optional[Sequence[str]] = None, input_dtype: Optional[str] = None,
                    kernel: str = "auto", timeout: Optional[float] = None, out=None):
        """Reduces each of many arrays of one dtype (each flat) in one request, as segments of
        their concatenation: a list of what `reduce(array, op)` answers for each (with `ops`, a
        tuple per array); [] for none. An empty array answers the op's identity (sum 0, prod 1,
        var NaN); an op without one (min) is refused (Error, INVALID_ARGUMENT). The arguments
        are `reduce`'s; `reduce_many_result` answers in full (arrays of one result per array).
        With `out` (as `reduce`'s) it answers the op's array, one result per array, a view of
        the region (with `ops`, a tuple of them)."""
        arrays = list(arrays)
        _requests.request_args(op, ops, ddof, dtype)  # checked where nothing is sent too
        if not arrays:
            return []
        result = self.reduce_many_result(arrays, op, ddof, dtype, ops=ops,
                                         input_dtype=input_dtype, kernel=kernel,
                                         timeout=timeout, out=out, _stacklevel=3)
        if out is not None:
            return result.scalar if ops is None else result.values
        return list(result.scalar) if ops is None else list(zip(*result.values))

    def reduce_many_result(self, arrays, op: Optional[str] = None, ddof: float = 0,
                           dtype=None, *, ops: Optional[Sequence[str]] = None,
                           input_dtype: Optional[str] = None, kernel: str = "auto",
                           timeout: Optional[float] = None, out=None,
                           _stacklevel: int = 2) -> Result:
        """`reduce_many`, answered in full: each op's `value` an array of one result per array."""
        names, cast, ddof = _requests.request_args(op, ops, ddof, dtype)
        data, lengths = _arrays.concatenate(arrays, input_dtype)
        layout = _arrays.for_segments(lengths)
        return self._reduce_array(data, layout, names, cast, ddof, kernel, timeout,
                                  _stacklevel + 1, _output.for_request(out, layout, cast))

    def _reduce_array(self, data, layout, names, cast, ddof, kernel, timeout,
                      stacklevel: int, output: Optional[_output.Output] = None) -> Result:
        """An array request (shape and axes, or segments), answered with NumPy arrays (views of
        the region with `output`)."""
        sent = _arrays.as_float64(data) if _arrays.widens(data.dtype, names, cast) else data
        spec = _requests.make_spec(names, sent.dtype, ddof, kernel, sent.count)
        layout.apply(spec)
        if output is not None:
            output.apply(spec)
            result = output.result(self._send(spec, sent, timeout), names, sent.dtype, layout)
        else:
            result = _arrays.typed_arrays(self._send(spec, sent, timeout), names, sent.dtype,
                                          data.dtype, cast, layout)
        _results.warn_overflow(result, stacklevel)
        return result

    def _send(self, spec, data: "_dtypes.Payload", timeout: Optional[float]):
        """One Reduce (the array in one message) or ReduceStream (in chunks of chunk_bytes)."""
        spec_bytes = spec.SerializeToString()
        view = data.memoryview()
        try:
            if len(view) <= self._chunk_bytes:
                return self._reduce_raw(_requests.encode_message(spec_bytes, view),
                                        timeout=timeout, metadata=self._metadata)
            return self._reduce_stream_raw(self._chunks(spec_bytes, view), timeout=timeout,
                                           metadata=self._metadata)
        except grpc.RpcError as error:
            raise Error(error.code(), error.details()) from None

    def kernels(self) -> list:
        """The kernels the server runs, as the server describes them (ListKernels)."""
        return list(self._call(self._stub.ListKernels, reduce_pb2.ListKernelsRequest()).kernels)

    def info(self, *, timeout: Optional[float] = None):
        """The server's description of itself (GetServerInfo): version, backend, devices,
        limits, and `shared_memory`, whether it accepts shared-memory regions."""
        return self._call(self._stub.GetServerInfo, reduce_pb2.GetServerInfoRequest(), timeout)

    # -- shared memory (the server must run on this host, with --allow-shared-memory) ----------

    def shared_memory(self, source, *, offset: int = 0, byte_size: Optional[int] = None,
                      name: Optional[str] = None, device_id: Optional[int] = None,
                      input_dtype: Optional[str] = None, writable: bool = False) -> SharedRegion:
        """A context manager that registers `source` with the server for the `with` block:

            with client.shared_memory(x) as region:
                total = region.reduce("sum")
                smallest, largest = region.reduce(ops=["min", "max"])

        `source` is an array of a dtype `reduce` takes (any shape; copied once into a new POSIX
        shared-memory segment, which is unlinked on leaving the block), an existing
        `multiprocessing.shared_memory.SharedMemory` (registered from byte `offset`, `byte_size`
        bytes or the whole elements to its end; the caller keeps owning it; its elements are
        `input_dtype`'s, float32 unless named), or a CUDA array or tensor
        (`__cuda_array_interface__`, C-contiguous: registered by its CUDA IPC handle on its
        device, or `device_id` where the server numbers the devices differently).
        `input_dtype="bfloat16"` names uint16 arrays' bits so. `name` is the region's name in
        the server (default: a unique one). `writable=True` (system memory) lets the server write
        results into it: it may then be `out=` of an array request. The block yields a
        SharedRegion; its `reduce(op, ...)` answers as `Client.reduce` does, its `reduce_result`
        as `Client.reduce_result`.
        """
        return SharedRegion(self, source, offset=offset, byte_size=byte_size, name=name,
                            device_id=device_id, input_dtype=input_dtype, writable=writable)

    def register_system_shared_memory(self, name: str, key: str, offset: int = 0,
                                      byte_size: Optional[int] = None, *,
                                      timeout: Optional[float] = None,
                                      unlink_key: bool = False, writable: bool = False) -> Region:
        """Registers POSIX shared-memory object `key` ("/" and its name, as shm_open takes it;
        for a SharedMemory `shm`, "/" + shm.name) as region `name`: `byte_size` bytes from
        `offset` (both multiples of 2), by default the whole 4-byte words from `offset` to its end.
        `unlink_key`: the server removes the name from /dev/shm once it has mapped the object
        (for an object made only to lend it; the memory lives on while registered). `writable`:
        the server opens it read-write and may write array requests' results into it (out=). A
        region holds elements of any dtype: the request that reads it names theirs."""
        if byte_size is None:
            byte_size = max(object_bytes(key) - offset, 0) // 4 * 4
        request = reduce_pb2.RegisterSystemSharedMemoryRequest(
            name=name, key=key, offset=offset, byte_size=byte_size, unlink_key=unlink_key,
            writable=writable)
        return Region.from_message(
            self._local_call("RegisterSystemSharedMemory", request, timeout).region)

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
            self._local_call("RegisterCudaSharedMemory", request, timeout).region)

    def list_shared_memory(self, *, timeout: Optional[float] = None) -> RegionList:
        """The regions registered now (every client's), with the server's limits on them."""
        response = self._local_call("ListSharedMemory",
                              reduce_pb2.ListSharedMemoryRequest(), timeout)
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
        return list(self._local_call("UnregisterSharedMemory", request, timeout).names)

    def reduce_shared(self, region, offset: int = 0, byte_size: Optional[int] = None,
                      op: Optional[str] = None, kernel: str = "auto", *,
                      ops: Optional[Sequence[str]] = None, ddof: float = 0, dtype=None,
                      input_dtype: str = "float32", timeout: Optional[float] = None,
                      shape: Optional[Sequence[int]] = None, axis=None, keepdims: bool = False,
                      out=None, _stacklevel: int = 2) -> Result:
        """Reduces `byte_size` bytes from `offset` of registered region `region` (its name, or a
        Region, whose size is then the default) in place on the server, its elements of
        `input_dtype` (float32 unless named), as an array of `shape` (default: 1-D) for `axis`
        and `keepdims`; the other arguments are `reduce`'s (`out`: results into another part of
        a region, or another region). Returns the whole Result."""
        names, cast, ddof = _requests.request_args(op, ops, ddof, dtype)
        name = _dtypes.input_type(input_dtype) or "float32"
        if isinstance(region, Region):
            if byte_size is None:
                byte_size = region.byte_size - offset
            region = region.name
        if byte_size is None:
            raise ValueError("byte_size is needed where the region is given by name")
        if offset < 0 or byte_size < 0:
            raise ValueError(f"offset ({offset}) and byte_size ({byte_size}) cannot be negative")
        itemsize = _dtypes.DTYPES[name][1]
        count = byte_size // itemsize if byte_size % itemsize == 0 else 0

        layout = _arrays.for_axes((count,) if shape is None else shape, axis, keepdims, names)
        output = _output.for_request(out, layout, cast)
        if layout is not None and _arrays.widens(name, names, cast):
            raise TypeError(f"dtype={cast} with axis= of a {name} region: its results would be "
                            f"rounded twice; reduce a float64 copy, or pass no dtype")

        def send(op_names):
            spec = _requests.make_spec(op_names, name, ddof, kernel, count)
            if layout is not None:
                layout.apply(spec)
            if output is not None:
                output.apply(spec)
            request = reduce_pb2.ReduceRequest(
                spec=spec, shared_memory=reduce_pb2.SharedMemoryRef(
                    region=region, offset=offset, byte_size=byte_size))
            return self._local_call("Reduce", request, timeout)

        if output is not None:
            result = output.result(send(names), names, name, layout)
        elif layout is not None:
            result = _arrays.typed_arrays(send(names), names, name, name, cast, layout)
        else:
            result = _results.typed_result(send(names), names, name, cast,
                                           lambda op: send((op,)))
        _results.warn_overflow(result, _stacklevel)
        return result

    def _local_call(self, method: str, request, timeout: Optional[float] = None):
        """A shared-memory call, over the server's Unix socket where the route found one."""
        stub = self._local.stub(timeout)
        try:
            return self._call(getattr(stub, method), request, timeout)
        except Error as error:
            if error.code == grpc.StatusCode.UNAVAILABLE:
                self._local.unavailable(stub)
            raise

    def _call(self, method, request, timeout: Optional[float] = None):
        try:
            return method(request, timeout=timeout, metadata=self._metadata)
        except grpc.RpcError as error:
            raise Error(error.code(), error.details()) from None

    def _chunks(self, spec: bytes, view: memoryview) -> Iterator[bytes]:
        for begin in range(0, len(view), self._chunk_bytes):
            # The spec rides in the first chunk only; a chunk may end inside an element.
            yield _requests.encode_message(spec if begin == 0 else None,
                                           view[begin:begin + self._chunk_bytes])
