"""The server's answers as Python objects: Result and its OpResults (each op's NumPy scalar),
Error for a refusal, and OverflowWarning for an integer result that wrapped around."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any, List, Optional

import grpc
import numpy

from gpureduce import _dtypes
from gpureduce.v1 import reduce_pb2


class OverflowWarning(RuntimeWarning):
    """An integer result wrapped around (modulo 2^64) as NumPy's does silently; the exact one
    does not fit in int64. `warnings.simplefilter("ignore", gpureduce.OverflowWarning)` for
    NumPy's silence, "error" to raise instead."""


class Error(Exception):
    """The server (or the connection) answered with a gRPC error: `code` and `message`."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message


@dataclasses.dataclass
class OpResult:
    """One op's typed answer. `value` is a NumPy scalar of NumPy's result dtype (or of `dtype=`'s;
    bfloat16 results are float32 scalars holding the bfloat16 value, NumPy having no bfloat16);
    for the arg ops it is the index (int64) and `element` the element there. `dtype` names the
    server's result type; `overflow` says an integer result wrapped around. An array request's
    (axis=, keepdims=, reduce_many) `value` is a NumPy array of NumPy's result shape (a NumPy
    scalar where that shape is ()), an arg op's its int64 indices; `overflow_count` says how
    many of its elements wrapped. With `out=`, `value` is a view of the region and
    `output_offset` where in the region (in bytes) the server wrote it."""

    op: str
    dtype: str
    value: Any
    index: int = -1
    overflow: bool = False
    element: Optional[float] = None  # arg ops: the element at `index` (as a float64)
    overflow_count: int = 0  # an array's answer (axis=, reduce_many): the elements that wrapped
    output_offset: Optional[int] = None  # out=: where the array starts in the region


@dataclasses.dataclass
class Result:
    """A reduction's whole answer: `results` holds one OpResult per op, in the request's order;
    `value` is the first op's float64 result before rounding to its dtype (what every version of
    this client answered), `index` -1 except for the arg ops; `dtype` the payload's type."""

    value: float
    index: int
    count: int
    kernel: str
    backend: str
    device: str
    timing: dict  # queue_us, h2d_us, kernel_us, d2h_us, server_us, bytes, chunks, ...
    dtype: str = "float32"
    results: List[OpResult] = dataclasses.field(default_factory=list)

    @property
    def scalar(self):
        """The first op's NumPy scalar: what `Client.reduce` returns for one op."""
        return self.results[0].value

    @property
    def values(self) -> tuple:
        """Every op's NumPy scalar, in order: what `Client.reduce(..., ops=...)` returns."""
        return tuple(r.value for r in self.results)

    @property
    def overflow(self) -> bool:
        return any(r.overflow for r in self.results)


def typed_result(response, names, input_dtype: str, cast: Optional[str], again) -> Result:
    """The Result of `response`, its ops' answers as NumPy scalars. `again(op)` asks for one
    op alone: where `dtype=` asks for a float result of another precision than the server's,
    each op after the first needs its unrounded value, which only a response's `value` has."""
    answered = checked_dtype(response, input_dtype)
    messages = list(response.results)
    if not messages:  # a server that predates typed results: float32, one classic op
        op = names[0]
        messages = [reduce_pb2.OpResult(
            op=_dtypes.OPS[op], dtype=reduce_pb2.INT64 if op in _dtypes.ARG_OPS
            else reduce_pb2.FLOAT32, value=float(numpy.float32(response.value)),
            int_value=max(response.index, 0) if op in _dtypes.ARG_OPS else 0,
            index=response.index)]
    if len(messages) != len(names):
        raise Error(grpc.StatusCode.INTERNAL, f"the server answered {len(messages)} results "
                    f"for {len(names)} ops")
    results = []
    for i, (op, message) in enumerate(zip(names, messages)):
        result_dtype = _dtypes.dtype_name(message.dtype)
        exact = None
        if (cast is not None and cast != result_dtype and op not in _dtypes.ARG_OPS
                and result_dtype not in ("int32", "int64")):
            exact = response.value if i == 0 else again(op).value
        value = _dtypes.scalar(op, result_dtype, message.value, message.int_value, cast,
                               exact)
        results.append(OpResult(
            op=op, dtype=result_dtype, value=value, index=message.index,
            overflow=message.overflow,
            element=message.value if op in _dtypes.ARG_OPS else None))
    return make_result(response, answered, results)


def checked_dtype(response, input_dtype: str) -> str:
    """The payload type the server says it reduced, which must be the one sent."""
    answered = _dtypes.dtype_name(response.dtype)
    if answered != input_dtype:
        raise Error(grpc.StatusCode.UNIMPLEMENTED,
                    f"the server reduced the payload as {answered}, not {input_dtype}: it "
                    "predates dtypes (gpureduce 0.1 reduces float32 only); upgrade it")
    return answered


def make_result(response, dtype: str, results: List[OpResult]) -> Result:
    t = response.timing
    timing = {field.name: getattr(t, field.name) for field in t.DESCRIPTOR.fields}
    return Result(value=response.value, index=response.index, count=response.count,
                  kernel=response.kernel, backend=response.backend, device=response.device,
                  timing=timing, dtype=dtype, results=results)


def warn_overflow(result: Result, stacklevel: int) -> None:
    for r in result.results:
        if not r.overflow:
            continue
        if isinstance(r.value, numpy.ndarray):  # an array's answer: how many of it wrapped
            what = (f"in {r.overflow_count} of its {r.value.size} results and wrapped around, "
                    "as NumPy's does")
        else:
            what = f"and wrapped around, as NumPy's does (the answer is {r.value})"
        warnings.warn(f"gpureduce: the {r.op} of {result.dtype} overflowed int64 {what}",
                      OverflowWarning, stacklevel=stacklevel + 1)
