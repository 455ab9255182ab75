"""Requests as the wire carries them: a reduce call's arguments checked, its ReduceSpec, and
ReduceRequest/ReduceChunk bytes serialized here with the payload copied once."""

from __future__ import annotations

from typing import Optional

from gpureduce import _dtypes
from gpureduce.v1 import reduce_pb2


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


# ReduceRequest and ReduceChunk alike: field 1 the spec, field 2 the data (length-delimited).
_SPEC_TAG, _DATA_TAG = b"\x0a", b"\x12"


def encode_message(spec: Optional[bytes], data: memoryview) -> bytes:
    """A ReduceRequest's (or ReduceChunk's) wire bytes: the array's bytes are copied once, into
    the message, from the array's own memory (protobuf's Python API would copy them twice more:
    it takes only `bytes`)."""
    parts = [] if spec is None else [_SPEC_TAG, varint(len(spec)), spec]
    parts += [_DATA_TAG, varint(len(data)), data]
    return b"".join(parts)


def request_args(op, ops, ddof, dtype):
    """The op names, `dtype=`'s type and ddof of a reduce call, checked."""
    if isinstance(ddof, str):
        raise TypeError(f"ddof={ddof!r}: reduce's third argument is ddof; name the kernel "
                        "with kernel=")
    if ops is not None and op is not None:
        raise ValueError("pass op or ops, not both")
    names = _dtypes.ops_tuple(ops if ops is not None else (op or "sum"))
    cast = _dtypes.result_type(dtype)
    if cast is not None and ops is None and names[0] in _dtypes.ARG_OPS:
        raise TypeError(f"{names[0]} answers an int64 index and takes no dtype")
    return names, cast, float(ddof)


def make_spec(names, dtype: str, ddof: float, kernel: str, count: int):
    spec = reduce_pb2.ReduceSpec(kernel=kernel, expected_count=count)
    if len(names) == 1:
        spec.op = _dtypes.OPS[names[0]]  # what every server version reads
    else:
        spec.ops.extend(_dtypes.OPS[name] for name in names)
    if dtype != "float32":
        spec.dtype = _dtypes.DTYPES[dtype][0]
    if any(name in _dtypes.MOMENT_OPS for name in names):
        spec.ddof = ddof
    return spec

