"""NumPy's answers along axes, for test_axes.py: fresh data of mixed sign with NaN in some rows,
NumPy's result (in float64 where NumPy's own float16/float32 accumulation would be inexact) and
the comparison a float result is held to: the service's is the exact reduction rounded once to
the result dtype, so within a couple of units in its last place of the float64 reference (plus
the reference's own error, judged by the slice's scale); integers, min, max and the arg ops are
compared exactly."""

import warnings

import numpy

from reference import ARG_OPS, EXTREMA, MOMENTS, cast, result_dtype

INTEGERS = ("int32", "int64")


def make(dtype, shape, rng, nan=True):
    """(sent, values) of `shape`: mixed sign and magnitude (integers over a wide range), with
    NaN at a few places of a float array of 6 elements or more (so that some rows hold one)."""
    size = int(numpy.prod(shape, dtype=numpy.int64))
    if dtype in INTEGERS:
        bound = 2**31 if dtype == "int32" else 2**40
        x = rng.integers(-bound, bound, size)
    else:
        low, high = (-3, 3) if dtype in ("float16", "bfloat16") else (-10, 11)
        x = (rng.choice([-1.0, 1.0], size) * rng.uniform(1, 2, size) *
             numpy.exp2(rng.integers(low, high, size)))
        if nan and size >= 6:
            x[rng.choice(size, max(1, size // 25), replace=False)] = numpy.nan
    return cast(x.reshape(shape), dtype)


def _product(wide, axis, keepdims, skip_nan):
    """The product along `axis` in float64 with no partial product overflowing: mantissas'
    logarithms and exponents summed apart (error ~1e-12, relative)."""
    nan = numpy.isnan(wide)
    if skip_nan:
        wide = numpy.where(nan, 1.0, wide)
    mantissa, exponent = numpy.frexp(numpy.where(nan, 1.0, wide))
    negative = numpy.sum(mantissa < 0, axis=axis, keepdims=keepdims) % 2
    zero = numpy.any(mantissa == 0, axis=axis, keepdims=keepdims)
    with numpy.errstate(divide="ignore"):
        logs = numpy.sum(numpy.log2(numpy.abs(mantissa)), axis=axis, keepdims=keepdims)
    logs = numpy.where(zero, 0.0, logs)
    whole = numpy.floor(logs)
    exponents = numpy.sum(exponent, axis=axis, keepdims=keepdims) + whole.astype(numpy.int64)
    exponents = numpy.clip(exponents, -5000, 5000)  # past float64's range either way
    value = numpy.ldexp(numpy.exp2(logs - whole), exponents.astype(numpy.int32))
    value = numpy.where(zero, 0.0, value) * numpy.where(negative, -1.0, 1.0)
    if not skip_nan:
        value = numpy.where(numpy.any(nan, axis=axis, keepdims=keepdims), numpy.nan, value)
    return value


def expected(op, values, axis, keepdims, ddof):
    """(answer, scale): NumPy's answer to op(values, axis, keepdims) (float64 for float results
    of float data), and the scale its float64 error is judged by. Raises ValueError where NumPy
    does (an arg op of an all-NaN slice)."""
    kind = values.dtype.kind
    wide = values.astype(numpy.float64)
    where = dict(axis=axis, keepdims=keepdims)
    with warnings.catch_warnings(), numpy.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if op in ARG_OPS or op in EXTREMA:
            return getattr(numpy, op)(values, **where), None
        if kind == "i" and op in ("sum", "prod", "nansum", "nanprod"):
            return getattr(numpy, op)(values, **where), None  # exact (wrapping as NumPy's)
        skip = op.startswith("nan")
        finite = numpy.where(numpy.isnan(wide), 0.0, wide) if skip else wide
        count = numpy.sum(~numpy.isnan(wide), **where) if skip else numpy.sum(
            numpy.ones_like(wide), **where)
        magnitude = numpy.sum(numpy.abs(finite), **where)
        squares = numpy.sum(finite * finite, **where)
        base = op[3:] if skip else op
        if base == "sum":
            return getattr(numpy, op)(wide, **where), magnitude
        if base == "mean":
            return getattr(numpy, op)(wide, **where), magnitude / count
        if base == "sum_squares":
            return numpy.sum(wide * wide, **where), squares
        if base == "prod":
            value = _product(wide, axis, keepdims, skip)
            return value, numpy.abs(value)
        assert op in MOMENTS, op
        # numpy.nanvar of integers is numpy.var: inf where the divisor is not positive (of
        # floats: NaN); either way NumPy computes integers' moments in float64
        value = getattr(numpy, op)(values if kind == "i" else wide, ddof=ddof, **where)
        scale = squares / numpy.where(count - ddof > 0, count - ddof, 1)
        return value, (numpy.sqrt(scale) if base == "std" else scale)


def _ulp(values, dtype):
    """The spacing of `dtype`'s values at each of `values` (finite, float64)."""
    magnitude = numpy.abs(values)
    if dtype == "bfloat16":
        exponent = numpy.frexp(numpy.where(magnitude > 0, magnitude, 1.0))[1] - 1
        return numpy.exp2(numpy.maximum(exponent, -126) - 7.0)
    kind = numpy.dtype(dtype).type
    with numpy.errstate(over="ignore"):
        return numpy.spacing(magnitude.astype(kind)).astype(numpy.float64)


def _round(values, dtype):
    from gpureduce import _arrays  # pylint: disable=import-outside-toplevel
    if dtype == "bfloat16":
        return _arrays.round_to_bfloat16(values).astype(numpy.float64)
    with numpy.errstate(over="ignore"):
        return values.astype(dtype).astype(numpy.float64)


def compare(op, dtype, got, answer, scale, label):
    """Asserts `got` (client.reduce's answer) is NumPy's `answer` in shape and type, exactly
    for integers, extrema and the arg ops, else within 2 ulps of the result dtype (float64:
    4, plus 1e-13 of the scale; products 1e-10) of the float64 reference."""
    want = result_dtype(op, dtype)
    want_type = numpy.float32 if want == "bfloat16" else numpy.dtype(want).type
    if numpy.ndim(answer) == 0:
        assert type(got) is want_type, (label, type(got), want_type)  # noqa: E721
    else:
        assert isinstance(got, numpy.ndarray) and got.dtype == want_type, (label, type(got))
        assert got.shape == numpy.shape(answer), (label, got.shape, numpy.shape(answer))
    got = numpy.asarray(got)
    answer = numpy.asarray(answer)
    if want in INTEGERS:
        bad = got != answer
    elif scale is None:  # min, max: exactly NumPy's (NaN where it answers NaN)
        bad = ~((got == answer) | (numpy.isnan(got) & numpy.isnan(answer)))
    else:
        got64 = got.astype(numpy.float64)
        rounded = _round(answer.astype(numpy.float64), want)
        relative = 1e-10 if "prod" in op else 1e-13
        ulps = 4 if want == "float64" else 2
        finite = numpy.isfinite(rounded) & numpy.isfinite(got64)
        with numpy.errstate(invalid="ignore"):
            tolerance = ulps * _ulp(numpy.where(finite, rounded, 0), want) + relative * numpy.where(
                numpy.isfinite(scale), scale, 0)
            close = finite & (numpy.abs(got64 - answer) <= tolerance)
        bad = ~((got64 == rounded) | (numpy.isnan(got64) & numpy.isnan(rounded)) | close)
    if numpy.any(bad):
        where = numpy.argwhere(numpy.atleast_1d(bad))[:5]
        flat_got, flat_answer = numpy.atleast_1d(got), numpy.atleast_1d(answer)
        shown = [(tuple(w), flat_got[tuple(w)], flat_answer[tuple(w)]) for w in where]
        raise AssertionError(f"{label}: {int(numpy.sum(bad))} results differ from NumPy's, "
                             f"e.g. (where, got, NumPy) {shown}")
