"""gpureduce.Client: reductions of NumPy float32 arrays of any size, over plaintext or TLS."""

from __future__ import annotations

import dataclasses
from typing import Iterator, Optional

import grpc
import numpy

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

    `target` is HOST:PORT (or any gRPC target). For TLS give `tls_ca` (the PEM file of the CA
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
        options = [("grpc.max_receive_message_length", -1),
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
        input cut short is refused rather than reduced. Raises Error for the server's refusals
        (the code and message say what was wrong), ValueError for an unknown op, TypeError for
        an array that is not float32.
        """
        if op not in OPS:
            raise ValueError(f"unknown op {op!r}; use one of {', '.join(OPS)}")
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
        try:
            return list(self._stub.ListKernels(reduce_pb2.ListKernelsRequest(),
                                               metadata=self._metadata).kernels)
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
