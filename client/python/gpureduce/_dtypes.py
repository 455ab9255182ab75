"""The element types gpureduce reduces, how arrays of each reach the wire, and how the server's
typed answers become NumPy scalars.

The payload is always the elements' little-endian bytes. NumPy arrays of the supported dtypes go
as they are (a C-contiguous array's own memory; any other is made contiguous once). NumPy has no
bfloat16: its arrays come as uint16 (or int16) arrays named so by `input_dtype="bfloat16"`, as
arrays whose dtype is called "bfloat16" (ml_dtypes, JAX), or as PyTorch tensors.
"""

from __future__ import annotations

import math
import sys
from typing import Any, NamedTuple, Optional, Tuple

import numpy

from gpureduce.v1 import reduce_pb2

# name -> (wire enum, itemsize, the NumPy dtype of its elements; bfloat16's are uint16 bits)
DTYPES = {
    "float32": (reduce_pb2.FLOAT32, 4, numpy.dtype("<f4")),
    "float16": (reduce_pb2.FLOAT16, 2, numpy.dtype("<f2")),
    "bfloat16": (reduce_pb2.BFLOAT16, 2, numpy.dtype("<u2")),
    "float64": (reduce_pb2.FLOAT64, 8, numpy.dtype("<f8")),
    "int32": (reduce_pb2.INT32, 4, numpy.dtype("<i4")),
    "int64": (reduce_pb2.INT64, 8, numpy.dtype("<i8")),
}
SUPPORTED = ", ".join(DTYPES)
_BY_ENUM = {wire: name for name, (wire, _, _) in DTYPES.items()}
_BY_ENUM[reduce_pb2.DTYPE_UNSPECIFIED] = "float32"  # what an unset dtype has always meant

# The ops by the names the CLI and the server's messages use (numpy's function names).
OPS = {name.lower(): value for name, value in reduce_pb2.Op.items() if value != 0}
ARG_OPS = frozenset({"argmin", "argmax", "nanargmin", "nanargmax"})
MOMENT_OPS = frozenset({"var", "std", "nanvar", "nanstd"})


def dtype_name(wire: int) -> str:
    return _BY_ENUM.get(wire, f"dtype {wire}")


def _unsupported(what: str) -> TypeError:
    return TypeError(f"gpureduce reduces {SUPPORTED} arrays, not {what} (bfloat16: a uint16 "
                     "array of its bits with input_dtype=\"bfloat16\", or a torch.bfloat16 "
                     "tensor); convert it with array.astype(...) first")


class Payload(NamedTuple):
    """An array ready to send: its dtype's name and its bytes (a flat, C-contiguous NumPy array
    of `DTYPES[name][2]`, or for a CUDA array the object itself), and the caller's array's
    shape (None: 1-D)."""

    dtype: str
    array: Any
    cuda: bool = False
    shape: Optional[Tuple[int, ...]] = None

    @property
    def itemsize(self) -> int:
        return DTYPES[self.dtype][1]

    @property
    def count(self) -> int:
        return int(self.array.size)

    @property
    def nbytes(self) -> int:
        return self.count * self.itemsize

    def memoryview(self) -> memoryview:
        """The elements' bytes, without a copy."""
        return memoryview(self.array).cast("B")


def _is_torch(obj) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


def _from_torch(tensor, input_dtype: Optional[str]):
    """A CPU tensor's NumPy view (no copy), or for a CUDA tensor an object with
    `__cuda_array_interface__`, and its dtype's name."""
    import torch  # pylint: disable=import-outside-toplevel
    names = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
             torch.float64: "float64", torch.int32: "int32", torch.int64: "int64"}
    name = names.get(tensor.dtype)
    if name is None:
        raise _unsupported(f"{tensor.dtype} tensors")
    if input_dtype is not None and input_dtype != name:
        raise TypeError(f"input_dtype={input_dtype!r} does not match the tensor's {tensor.dtype}")
    tensor = tensor.detach()
    if name == "bfloat16":  # the same bits as int16: NumPy and __cuda_array_interface__ take it
        tensor = tensor.view(torch.int16)
    if tensor.is_cuda:
        return tensor, name
    if tensor.device.type != "cpu":
        raise TypeError(f"gpureduce reads CPU and CUDA tensors, not {tensor.device.type} ones")
    return tensor.resolve_conj().resolve_neg().numpy(), name


def input_type(input_dtype: Optional[str]) -> Optional[str]:
    """`input_dtype`'s name (a NumPy dtype, or "bfloat16"); TypeError for an unsupported one."""
    if input_dtype is None:
        return None
    try:
        name = "bfloat16" if str(input_dtype) == "bfloat16" else numpy.dtype(input_dtype).name
    except TypeError:
        name = ""
    if name not in DTYPES:
        raise _unsupported(repr(input_dtype))
    return name


def payload(array, input_dtype: Optional[str] = None) -> Payload:
    """What `array` sends: NumPy arrays of a supported dtype as they are (any shape, reduced
    flat in C order), a list or scalar as NumPy makes it (float32 when it holds floats, as every
    version of this client did), PyTorch tensors, CUDA arrays (`__cuda_array_interface__`).
    TypeError names the supported dtypes for any other."""
    input_dtype = input_type(input_dtype)
    if _is_torch(array):
        array, input_dtype = _from_torch(array, input_dtype)
    if not isinstance(array, numpy.ndarray) and hasattr(array, "__cuda_array_interface__"):
        from gpureduce import _cuda  # pylint: disable=import-outside-toplevel
        return Payload(_cuda.array_dtype(array, input_dtype), array, cuda=True,
                       shape=tuple(int(n) for n in array.__cuda_array_interface__["shape"]))
    if not isinstance(array, numpy.ndarray):
        array = numpy.asarray(array)
        if array.dtype.kind == "f" and input_dtype is None:
            array = array.astype(numpy.float32)  # a Python list of floats: float32, as always
    dtype = array.dtype
    if dtype.name == "bfloat16" and dtype.itemsize == 2:  # ml_dtypes / JAX's bfloat16
        name = "bfloat16"
        if input_dtype not in (None, "bfloat16"):
            raise TypeError(f"input_dtype={input_dtype!r} does not match the array's bfloat16")
        array = array.view(numpy.uint16)
    elif input_dtype == "bfloat16":
        if dtype.kind not in "iu" or dtype.itemsize != 2:
            raise TypeError(f"input_dtype=\"bfloat16\" names the bits of bfloat16 values: a "
                            f"uint16 or int16 array, not {dtype}")
        name = "bfloat16"
    else:
        name = dtype.name if dtype.kind in "fi" else ""
        if name not in DTYPES or name == "bfloat16":
            raise _unsupported(str(dtype) if dtype.kind != "V" else f"{dtype.name} (structured)")
        if input_dtype is not None and input_dtype != name:
            raise TypeError(f"input_dtype={input_dtype!r} does not match the array's {dtype}; "
                            "gpureduce does not convert (use array.astype)")
    wanted = DTYPES[name][2]
    if dtype.byteorder == ">" or (dtype.byteorder == "=" and not numpy.little_endian):
        array = array.astype(wanted.newbyteorder("<"))  # the wire is little-endian
    # Any shape is reduced as the flat array in C order; only a non-contiguous one is copied.
    flat = numpy.ascontiguousarray(array).reshape(-1)
    return Payload(name, flat, shape=tuple(array.shape))


# -- answers ----------------------------------------------------------------------------------

_SCALAR = {"float32": numpy.float32, "float16": numpy.float16, "float64": numpy.float64,
           "bfloat16": numpy.float32, "int32": numpy.int32, "int64": numpy.int64}


def round_to_bfloat16(value: float) -> float:
    """`value` rounded to the nearest bfloat16 (ties to even; past its range, an infinity), as a
    Python float: NumPy has no bfloat16, so bfloat16 results are float32 holding such values."""
    if value == 0 or not math.isfinite(value):
        return value
    exponent = max(math.frexp(value)[1] - 1, -126)
    quantum = math.ldexp(1.0, exponent - 7)
    rounded = round(value / quantum) * quantum  # round() is ties-to-even
    if abs(rounded) > math.ldexp(2.0 - 2.0 ** -7, 127):
        return math.copysign(math.inf, value)
    return rounded


def result_type(name: Optional[str]) -> Optional[str]:
    """A `dtype=` argument's name; TypeError for one gpureduce cannot answer in."""
    if name is None:
        return None
    try:
        resolved = "bfloat16" if str(name) == "bfloat16" else numpy.dtype(name).name
    except TypeError:
        resolved = str(name)
    if resolved not in DTYPES:
        raise TypeError(f"dtype={name!r}: gpureduce answers in {SUPPORTED}")
    return resolved


def scalar(op: str, result_dtype: str, value: float, int_value: int,
           cast: Optional[str] = None, exact: Optional[float] = None):
    """The NumPy scalar of one op's answer. `cast` is `dtype=`'s type; `exact` the unrounded
    float64 result it is rounded from (None: `value`)."""
    if op in ARG_OPS:
        return numpy.int64(int_value)
    integer = result_dtype in ("int32", "int64")
    if cast is None or cast == result_dtype:
        if integer:
            return _SCALAR[result_dtype](int_value)
        return _SCALAR[result_dtype](value)
    if cast in ("int32", "int64"):
        if not integer:
            raise TypeError(f"dtype={cast} for {op}, whose result is {result_dtype}: NumPy would "
                            "truncate every element first; convert the array instead")
        return numpy.int64(int_value).astype(cast)  # wraps as NumPy's accumulation would
    source = float(int_value) if integer else (value if exact is None else exact)
    if cast == "bfloat16":
        return numpy.float32(round_to_bfloat16(source))
    with numpy.errstate(over="ignore"):
        return _SCALAR[cast](source)


def ops_tuple(ops) -> Tuple[str, ...]:
    names = (ops,) if isinstance(ops, str) else tuple(ops)
    for op in names:
        if op not in OPS:
            raise ValueError(f"unknown op {op!r}; use one of {', '.join(OPS)}")
    if len(set(names)) != len(names):
        raise ValueError(f"ops={list(names)} names an op twice")
    if not names:
        raise ValueError("ops=[] names no op")
    return names
