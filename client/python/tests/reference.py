"""What the service must answer, from NumPy: test data of every dtype, NumPy's own answer, and the
exactly rounded reference that float results are held to.

Where NumPy accumulates a float16 or float32 (or bfloat16, which NumPy lacks) reduction in its own
precision, its answer can be off by more than the final rounding; the service's is the exact
reduction rounded once (docs/array-api.md). Those results are checked against the float64 (or
exact, math.fsum) reference rounded to the result dtype, and every place NumPy's answer differs is
recorded (DIFFERENCES, printed at the end of the run): dtype, op, size and both answers.
"""

import functools
import math
import warnings

import numpy

import gpureduce
from gpureduce import _dtypes

DTYPES = list(gpureduce.DTYPES)
FLOATS = ["float32", "float16", "bfloat16", "float64"]
OPS = list(gpureduce.OPS)
ARG_OPS = {"argmin", "argmax", "nanargmin", "nanargmax"}
EXTREMA = {"min", "max", "nanmin", "nanmax"}
MOMENTS = {"var", "std", "nanvar", "nanstd"}

# (dtype, op, size, case): the service's answer and NumPy's, where they differ.
DIFFERENCES = []


def bfloat16_bits(values) -> numpy.ndarray:
    """float32 values rounded to bfloat16 (to nearest, ties to even), as their uint16 bits."""
    bits = numpy.asarray(values, numpy.float32).view(numpy.uint32).astype(numpy.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = numpy.isnan(numpy.asarray(values, numpy.float32))
    return numpy.where(nan, 0x7FC0, rounded).astype(numpy.uint16)


def bfloat16_values(bits) -> numpy.ndarray:
    """bfloat16 bits as the float32 values they are (exactly)."""
    return (numpy.asarray(bits, numpy.uint16).astype(numpy.uint32) << 16).view(numpy.float32)


def cast(values, dtype: str):
    """(sent, values): float64 `values` as `dtype`: what the client sends and the NumPy array of
    the same values (float32 for bfloat16, whose bits are sent as uint16)."""
    if dtype == "bfloat16":
        bits = bfloat16_bits(numpy.asarray(values, numpy.float32))
        return bits, bfloat16_values(bits)
    sent = numpy.asarray(values).astype(dtype)
    return sent, sent


@functools.lru_cache(maxsize=64)
def data(dtype: str, size: int, kind: str = "general", seed: int = 22):
    """Reproducible data: mixed sign and magnitude (its sums cancel), or for products ("prod")
    factors near 1 (a million of them stay finite) with a few larger ones for integers."""
    rng = numpy.random.default_rng([seed, size, DTYPES.index(dtype), kind == "prod"])
    sign = rng.choice([-1.0, 1.0], size)
    if dtype in ("int32", "int64"):
        if kind == "prod":
            x = sign.astype(numpy.int64)
            few = rng.choice(size, min(size, 20), replace=False)
            x[few] *= rng.integers(2, 8, few.size)
            return cast(x, dtype)
        bound = 2**31 if dtype == "int32" else 2**40
        return cast(rng.integers(-bound, bound, size), dtype)
    if kind == "prod":
        if dtype in ("float32", "float64"):
            return cast(sign * rng.uniform(0.999, 1.001, size), dtype)
        step = 2.0**-11 if dtype == "float16" else 2.0**-8  # one ulp below 1
        return cast(sign * rng.choice([1 - step, 1.0, 1 + 2 * step], size), dtype)
    low, high = {"float16": (-8, 5)}.get(dtype, (-10, 11))
    return cast(sign * rng.uniform(1, 2, size) * numpy.exp2(rng.integers(low, high, size)), dtype)


def numpy_answer(op: str, values, ddof: float = 0):
    """NumPy's answer (for bfloat16 data: NumPy's on the float32 values). sum_squares, which
    NumPy lacks, is numpy.sum(x * x) for floats and a float64 sum of squares for integers (the
    service's result type: integer squares overflow)."""
    with warnings.catch_warnings(), numpy.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if op == "sum_squares":
            if values.dtype.kind == "i":
                wide = values.astype(numpy.float64)
                return numpy.sum(wide * wide)
            return numpy.sum(values * values)
        function = getattr(numpy, op)
        if op in MOMENTS:
            return function(values, ddof=ddof)
        try:
            return function(values)
        except ValueError:  # nanargmin of all-NaN, min of nothing: NumPy raises
            return None


def _round(value: float, dtype: str):
    with numpy.errstate(all="ignore"):
        if dtype == "bfloat16":
            return numpy.float32(_dtypes.round_to_bfloat16(float(value)))
        return numpy.dtype(dtype).type(value)


def exact(op: str, values, ddof: float = 0):
    """The float64 reference of a float result (sums by math.fsum, exact before its rounding;
    products in long double; moments two-pass) and the scale its float64 error is judged by."""
    wide = values.astype(numpy.float64)
    if op.startswith("nan"):
        wide = wide[~numpy.isnan(wide)]
    base = op[3:] if op.startswith("nan") else op
    n = wide.size
    finite = bool(numpy.all(numpy.isfinite(wide)))
    with numpy.errstate(all="ignore"):
        total = math.fsum(wide.tolist()) if finite else float(numpy.sum(wide))
        magnitude = math.fsum(numpy.abs(wide).tolist()) if finite else math.inf
        if base == "sum":
            return total, magnitude
        if base == "mean":
            return (total / n if n else math.nan), (magnitude / n if n else 0.0)
        if base == "sum_squares":
            squares = wide * wide
            value = math.fsum(squares.tolist()) if finite else float(numpy.sum(squares))
            return value, value
        if base == "prod":
            value = exact_product(wide)
            return value, abs(value)
        mean = total / n if n else math.nan
        deviations = wide - mean
        m2 = math.fsum((deviations * deviations).tolist()) if finite else float(
            numpy.sum(deviations * deviations))
        value = numpy.float64(m2) / numpy.float64(max(n - ddof, 0)) if n else math.nan
        if op.startswith("nan") and n - ddof <= 0 and values.dtype.kind == "f":
            # numpy.nanvar of floats: NaN where the divisor is not positive (numpy.var: inf, as
            # is numpy.nanvar of integers, which is numpy.var)
            value = math.nan
        if base == "std":
            value = numpy.sqrt(value)
        return float(value), abs(float(value))
    raise AssertionError(op)


def exact_product(wide) -> float:
    """The product of float64 values, with no partial product overflowing or underflowing (the
    exponents are summed apart), rounded to float64: 0 x inf is NaN, 0 x 2^5000 is 0."""
    mantissas, exponent = numpy.frexp(wide.astype(numpy.longdouble)), 0
    mantissas, exponents = mantissas
    exponent += int(exponents.sum())
    # Blocks of 1000 mantissas in [0.5, 1) stay within long double's range; renormalize, repeat.
    while mantissas.size > 1:
        blocks = [numpy.prod(mantissas[i:i + 1000]) for i in range(0, mantissas.size, 1000)]
        mantissas, exponents = numpy.frexp(numpy.array(blocks, numpy.longdouble))
        exponent += int(exponents.sum())
    mantissa = float(mantissas[0]) if mantissas.size else 1.0
    if mantissa == 0 or not math.isfinite(mantissa):
        return mantissa
    try:
        return math.ldexp(mantissa, exponent)
    except OverflowError:
        return math.copysign(math.inf, mantissa)


def result_dtype(op: str, dtype: str) -> str:
    """The service's result dtype: NumPy's (bfloat16 kept; sum_squares of ints float64)."""
    if op in ARG_OPS:
        return "int64"
    if dtype in ("int32", "int64"):
        base = op[3:] if op.startswith("nan") else op
        return {"sum": "int64", "prod": "int64", "min": dtype, "max": dtype}.get(base, "float64")
    return dtype


def same(a, b) -> bool:
    a, b = float(a), float(b)
    return a == b or (math.isnan(a) and math.isnan(b))


def check(op: str, dtype: str, values, got, ddof: float = 0, case: str = "") -> None:
    """`got` (client.reduce's answer for `values` of `dtype`) is NumPy's, value and type, or for
    float results the exact reference rounded to the result dtype (within 1e-13 of its scale
    for float64 results, whose reference is itself rounded); NumPy's differences are recorded."""
    want_dtype = result_dtype(op, dtype)
    want_type = numpy.float32 if want_dtype == "bfloat16" else numpy.dtype(want_dtype).type
    assert type(got) is want_type, (op, dtype, type(got), want_type)  # pylint: disable=C0123
    expected = numpy_answer(op, values, ddof)
    if dtype != "bfloat16" and expected is not None:
        assert expected.dtype == numpy.dtype(want_type), (op, dtype, expected.dtype)
    label = (dtype, op, values.size, case or f"ddof={ddof}" if op in MOMENTS else case)
    if op in ARG_OPS or op in EXTREMA or want_dtype in ("int32", "int64"):
        assert expected is not None and same(got, expected), (label, got, expected)
        return
    reference, scale = exact(op, values, ddof)
    if want_dtype == "float64":
        if math.isfinite(reference) and math.isfinite(scale):
            tolerance = (1e-10 if "prod" in op else 1e-13) * scale
            assert abs(float(got) - reference) <= tolerance, (label, got, reference, scale)
        else:
            assert same(got, reference), (label, got, reference)
    else:
        assert same(got, _round(reference, want_dtype)), (label, got, reference)
    if dtype != "bfloat16" and expected is not None and not same(got, expected):
        DIFFERENCES.append((*label, float(got), float(expected)))
