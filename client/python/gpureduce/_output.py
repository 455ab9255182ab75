"""`out=`: an array request's results written by the server into a shared-memory region
(ReduceSpec.output) instead of into the response, answered as NumPy views of this process's
mapping of the region: the results are never copied here, as NumPy's `out=` fills the caller's
array. The region is a SharedRegion registered `writable` (the server checks that, and that the
results fit: its refusals name spec.output); op i's array starts at the next multiple of 8 after
op i-1's, and the answer says where (OpResult.output_offset).

A view is what the server wrote, of NumPy's result shape and dtype, except that bfloat16 results
are their uint16 bits (as `SharedRegion.array` holds bfloat16 elements; NumPy has no bfloat16) and
that a result of shape () is a 0-d array rather than a NumPy scalar (a scalar would be a copy).
"""

from __future__ import annotations

import operator
from typing import List, Optional

import grpc
import numpy

from gpureduce import _arrays, _dtypes
from gpureduce._results import Error, OpResult, Result, make_result
from gpureduce.shared_memory import SharedRegion
from gpureduce.v1 import reduce_pb2


class Output:
    """Where an array request's results go: `region` from byte `offset` to its end."""

    def __init__(self, region: SharedRegion, offset: int):
        self.region = region
        self.offset = offset
        self.byte_size = region.region.byte_size - offset

    def apply(self, spec) -> None:
        spec.output.CopyFrom(reduce_pb2.SharedMemoryRef(
            region=self.region.name, offset=self.offset, byte_size=self.byte_size))

    def result(self, response, names, input_dtype: str, layout) -> Result:
        """The Result of the request: each op's `value` a view of the region (see the module's
        docstring). Raises Error where an op's array is not in the region as announced (never
        copied from the response instead)."""
        results: List[OpResult] = []
        for op, message in zip(names, _arrays.result_messages(response, names, input_dtype)):
            result_dtype = _dtypes.dtype_name(message.dtype)
            value = self._view(op, result_dtype, message, layout)
            results.append(OpResult(
                op=op, dtype=result_dtype, value=value,
                index=int(value) if op in _dtypes.ARG_OPS and layout.shape == () else -1,
                overflow=message.overflow or message.overflow_count > 0,
                overflow_count=int(message.overflow_count),
                output_offset=int(message.output_offset)))
        return make_result(response, input_dtype, results)

    def _view(self, op: str, name: str, message, layout) -> numpy.ndarray:
        if not message.HasField("output_offset"):
            raise Error(grpc.StatusCode.UNIMPLEMENTED,
                        f"the server answered the {op} in the response, not in region "
                        f"{self.region.name} (no output_offset): it predates spec.output; "
                        "upgrade it, or pass no out=")
        count, itemsize = _arrays.answer_extent(message, name, layout)
        wire = _dtypes.DTYPES[name][2]
        at = message.output_offset
        if at % 8 or at < self.offset or at + count * itemsize > self.offset + self.byte_size:
            raise Error(grpc.StatusCode.INTERNAL,
                        f"the server wrote the {op}'s {count * itemsize} bytes at byte {at} of "
                        f"region {self.region.name}, outside the bytes {self.offset} to "
                        f"{self.offset + self.byte_size} given it (or not at a multiple of 8)")
        # pylint: disable-next=protected-access
        return self.region._view(at, wire, count).reshape(layout.shape)


def for_request(out, layout, cast: Optional[str]) -> Optional[Output]:
    """`out=` of a request checked before anything is sent: None, a SharedRegion or
    (SharedRegion, offset in bytes). The request must be an array request (`layout`), and takes
    no `dtype=` (converting the results would copy them)."""
    if out is None:
        return None
    if layout is None:
        raise ValueError("out= takes the results of an array request (axis=, keepdims=True, "
                         "reduce_many): a reduction to one scalar answers in the response; pass "
                         "axis= or no out=")
    if cast is not None:
        raise TypeError(f"dtype={cast} with out=: the server writes each op's results in "
                        "NumPy's result dtype; convert the views afterwards, or pass no out=")
    region, offset = out if isinstance(out, tuple) and len(out) == 2 else (out, 0)
    if not isinstance(region, SharedRegion):
        raise TypeError(f"out= takes a region from client.shared_memory(..., writable=True), "
                        f"or (region, offset), not {type(out).__name__}: the answers are views "
                        "of its mapping in this process")
    if region.region is None:
        raise ValueError(f"shared-memory region {region.name} is not open (use it inside its "
                         "`with` block)")
    offset = operator.index(offset)
    if not 0 <= offset <= region.region.byte_size:
        raise ValueError(f"out= offset {offset} is outside region {region.name} "
                         f"({region.region.byte_size} bytes)")
    return Output(region, offset)
