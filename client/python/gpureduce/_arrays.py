"""Array requests (issue 23): NumPy's `axis=` and `keepdims=` over an N-D array, and segments
(`Client.reduce_many`). A Layout is what the ReduceSpec carries (shape, axes, keepdims,
segments) and the shape the answer must have; `typed_arrays` turns the answer's OpResult.shape
and .data into NumPy arrays of NumPy's result shape and dtype.

What NumPy refuses before it reads the data is refused here too, with NumPy's exception: an axis
out of range (AxisError), a repeated one (ValueError), a tuple of axes for an arg op or an axis
that is not an integer (TypeError). `axis=()` (reduce nothing) is sent as the array with a
trailing 1-length axis, which is reduced: every element its own result, as NumPy answers it.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import List, Optional, Sequence, Tuple

import grpc
import numpy

from gpureduce import _dtypes
from gpureduce._results import Error, OpResult, Result, checked_dtype, make_result

try:
    AxisError = numpy.exceptions.AxisError  # NumPy >= 1.25 (2.0 keeps it only there)
except AttributeError:
    AxisError = numpy.AxisError  # type: ignore[attr-defined]

_INTEGERS = ("int32", "int64")


@dataclasses.dataclass(frozen=True)
class Layout:
    """An array request: what its spec says, and the shapes of its answers."""

    wire_shape: Tuple[int, ...]    # ReduceSpec.shape (() with segments)
    axes: Tuple[int, ...]          # ReduceSpec.axes, as the caller gave them (): every axis)
    keepdims: bool
    segments: Tuple[int, ...]      # ReduceSpec.segments
    answer_shape: Tuple[int, ...]  # NumPy's result shape of the request as sent
    shape: Tuple[int, ...]         # NumPy's result shape of the caller's request

    def apply(self, spec) -> None:
        spec.shape.extend(self.wire_shape)
        spec.axes.extend(self.axes)
        spec.keepdims = self.keepdims
        spec.segments.extend(self.segments)

    def describe(self) -> str:
        if self.segments:
            return f"{len(self.segments)} segments"
        return f"shape {self.wire_shape} along axes {self.axes or 'all'}"


def _index(axis) -> int:
    if isinstance(axis, (bool, numpy.bool_)):
        raise TypeError("an integer is required for the axis")
    try:
        return operator.index(axis)
    except TypeError:
        raise TypeError(f"'{type(axis).__name__}' object cannot be interpreted as an integer "
                        "(axis is None, an int or a tuple of ints)") from None


def for_axes(shape: Sequence[int], axis, keepdims: bool, names) -> Optional[Layout]:
    """The request for NumPy's `op(x, axis=axis, keepdims=keepdims)` of an array of `shape`; None
    for axis=None without keepdims (the scalar request every version sent)."""
    keepdims = bool(keepdims)
    if axis is None and not keepdims:
        return None
    shape = tuple(int(n) for n in shape)
    ndim = len(shape)
    if axis is None:
        axes: Tuple[int, ...] = ()
        reduced = set(range(ndim))
    else:
        if isinstance(axis, tuple):
            arg_ops = [op for op in names if op in _dtypes.ARG_OPS]
            if arg_ops:  # numpy.argmin(x, axis=(0,)) is a TypeError too
                raise TypeError(f"{arg_ops[0]} takes one axis (an int) or axis=None, not the "
                                f"tuple {axis}, as numpy.{arg_ops[0]} does")
            axes = tuple(_index(a) for a in axis)
        else:
            axes = (_index(axis),)
        normal = []
        for a in axes:
            if not -ndim <= a < ndim:
                raise AxisError(a, ndim)
            normal.append(a % ndim)
        if len(set(normal)) != len(normal):
            raise ValueError(f"duplicate value in 'axis': {axis}")
        if not axes:  # axis=(): each element its own result, reduced over a 1-length axis
            return Layout(shape + (1,), (ndim,), False, (), shape, shape)
        reduced = set(normal)
    answer = tuple(1 if i in reduced else n for i, n in enumerate(shape)
                   if keepdims or i not in reduced)
    if ndim == 0:  # a 0-d array goes as (1,); NumPy's answer is 0-d, keepdims or not
        return Layout((1,), (), keepdims, (), (1,) if keepdims else (), ())
    return Layout(shape, axes, keepdims, (), answer, answer)


def for_segments(lengths: Sequence[int]) -> Layout:
    lengths = tuple(int(n) for n in lengths)
    return Layout((), (), False, lengths, (len(lengths),), (len(lengths),))


def concatenate(arrays, input_dtype: Optional[str]):
    """`reduce_many`'s payload: the arrays' elements one after another (each flat, in C order),
    and their lengths. TypeError for arrays of different dtypes, or a CUDA array."""
    flats, name, same = [], None, None
    for array in arrays:
        # (`same is not None` first: NumPy reads `dtype == None` as float64's)
        if same is not None and type(array) is numpy.ndarray and array.dtype == same:  # noqa
            flats.append(array.reshape(-1))  # what payload() would make of it, sooner
            continue
        data = _dtypes.payload(array, input_dtype)
        if data.cuda:
            raise TypeError("reduce_many reads host arrays (NumPy arrays, CPU tensors), not "
                            "CUDA arrays: copy them to the host, or reduce each with reduce()")
        if name is not None and data.dtype != name:
            raise TypeError(f"reduce_many reduces arrays of one dtype, not of {name} and "
                            f"{data.dtype}: convert them first, or make one call per dtype")
        name, wire = data.dtype, _dtypes.DTYPES[data.dtype][2]
        flats.append(data.array.view(wire))  # bfloat16 bits as uint16, whatever they came as
        if same is None and type(array) is numpy.ndarray and array.dtype == wire:  # noqa: E721
            same = array.dtype
    if not flats:
        raise ValueError("reduce_many needs at least one array")
    flat = flats[0] if len(flats) == 1 else numpy.concatenate(flats)
    return _dtypes.Payload(name, flat), [f.size for f in flats]


def widens(dtype: str, names, cast: Optional[str]) -> bool:
    """Whether `dtype=` asks a float payload's float results in another float type: they must be
    rounded from their float64 value (as the scalar answer's are), so the payload is sent as
    float64 (exactly). A float result to an integer dtype is a TypeError, as for scalars."""
    if cast is None or dtype in _INTEGERS or all(op in _dtypes.ARG_OPS for op in names):
        return False
    if cast in _INTEGERS:
        op = next(op for op in names if op not in _dtypes.ARG_OPS)
        raise TypeError(f"dtype={cast} for {op}, whose result is {dtype}: NumPy would truncate "
                        "every element first; convert the array instead")
    return cast != dtype and dtype != "float64"


def as_float64(data: "_dtypes.Payload") -> "_dtypes.Payload":
    values = bfloat16_values(data.array) if data.dtype == "bfloat16" else data.array
    return _dtypes.Payload("float64", values.astype(numpy.float64), shape=data.shape)


def bfloat16_values(bits) -> numpy.ndarray:
    """bfloat16 bits (uint16) as the float32 values they are, exactly."""
    bits = numpy.asarray(bits, numpy.uint16)
    wide = bits.reshape(-1).astype(numpy.uint32) << numpy.uint32(16)
    return wide.view(numpy.float32).reshape(bits.shape)


def round_to_bfloat16(values) -> numpy.ndarray:
    """float64 values rounded once to bfloat16 (ties to even; past its range, infinities), as
    float32 arrays (_dtypes.round_to_bfloat16, for arrays)."""
    values = numpy.asarray(values, numpy.float64)
    out = values.copy()
    finite = numpy.isfinite(values) & (values != 0)
    _, exponent = numpy.frexp(values[finite])
    quantum = numpy.ldexp(1.0, numpy.maximum(exponent - 1, -126) - 7)
    rounded = numpy.round(values[finite] / quantum) * quantum  # numpy.round: ties to even
    largest = numpy.ldexp(2.0 - 2.0 ** -7, 127)
    out[finite] = numpy.where(numpy.abs(rounded) > largest, numpy.copysign(numpy.inf, rounded),
                              rounded)
    return out.astype(numpy.float32)


def answer_extent(message, name: str, layout: Layout) -> Tuple[int, int]:
    """An OpResult's element count and size, checked: NumPy's result shape for the layout, and a
    dtype this client knows (Error INTERNAL otherwise). Whether the elements came in the response
    or in a region (`out=`)."""
    shape = tuple(message.shape)
    if shape != layout.answer_shape:
        raise Error(grpc.StatusCode.INTERNAL,
                    f"the server answered shape {shape} for {layout.describe()}, not NumPy's "
                    f"{layout.answer_shape}")
    if name not in _dtypes.DTYPES:
        raise Error(grpc.StatusCode.INTERNAL, f"the server answered in {name}")
    return int(numpy.prod(shape, dtype=numpy.int64)), _dtypes.DTYPES[name][1]


def _decode(message, layout: Layout) -> Tuple[str, numpy.ndarray]:
    """An OpResult's elements as a NumPy array of the caller's result shape."""
    name = _dtypes.dtype_name(message.dtype)
    if not message.data and not message.shape:
        raise Error(grpc.StatusCode.UNIMPLEMENTED,
                    "the server answered an array request (axis=, keepdims=, reduce_many) with "
                    "no array: it predates them (issue 23); upgrade it, or pass axis=None")
    size, itemsize = answer_extent(message, name, layout)
    if len(message.data) != size * itemsize:
        raise Error(grpc.StatusCode.INTERNAL,
                    f"the server answered {len(message.data)} bytes for {size} {name} results")
    wire = numpy.frombuffer(message.data, _dtypes.DTYPES[name][2])
    if name == "bfloat16":  # NumPy has none: float32 arrays holding bfloat16 values
        values = bfloat16_values(wire)
    else:
        values = wire.astype(numpy.dtype(name))  # a writable copy, in the host's byte order
    return name, values.reshape(layout.shape)


def _cast(op: str, result_dtype: str, values: numpy.ndarray, cast: Optional[str]):
    """`dtype=` applied to an op's result array, as _dtypes.scalar applies it to a scalar (float
    results are float64 here: `widens` sent the payload so)."""
    if op in _dtypes.ARG_OPS or cast is None or cast == result_dtype:
        return values
    if cast in _INTEGERS:
        if result_dtype not in _INTEGERS:
            raise TypeError(f"dtype={cast} for {op}, whose result is {result_dtype}: NumPy would "
                            "truncate every element first; convert the array instead")
        return values.astype(cast)  # wraps as NumPy's accumulation would
    wide = values.astype(numpy.float64)
    if cast == "bfloat16":
        return round_to_bfloat16(wide)
    with numpy.errstate(over="ignore"):
        return wide.astype(cast)


def result_messages(response, names, sent_dtype: str) -> list:
    """The response's OpResults, one per op of `names`, checked (the payload's dtype, their
    count)."""
    checked_dtype(response, sent_dtype)
    messages = list(response.results)
    if len(messages) != len(names):
        raise Error(grpc.StatusCode.INTERNAL, f"the server answered {len(messages)} results "
                    f"for {len(names)} ops")
    return messages


def typed_arrays(response, names, sent_dtype: str, input_dtype: str, cast: Optional[str],
                 layout: Layout) -> Result:
    """The Result of an array request: each op's value a NumPy array of NumPy's result shape
    and dtype (or `dtype=`'s), a NumPy scalar where that shape is ()."""
    results: List[OpResult] = []
    for op, message in zip(names, result_messages(response, names, sent_dtype)):
        result_dtype, values = _decode(message, layout)
        values = _cast(op, result_dtype, values, cast)
        if sent_dtype != input_dtype and op not in _dtypes.ARG_OPS:
            result_dtype = input_dtype  # sent as float64 for dtype=: the result is the input's
        value = values[()] if layout.shape == () else values
        results.append(OpResult(
            op=op, dtype=result_dtype, value=value,
            index=int(value) if op in _dtypes.ARG_OPS and layout.shape == () else -1,
            overflow=message.overflow or message.overflow_count > 0,
            overflow_count=int(message.overflow_count)))
    return make_result(response, input_dtype, results)
