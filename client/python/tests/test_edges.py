"""The edges of the NumPy-reference matrix against the real server: NaN and infinities at the
start, middle and end (every op of every float dtype in one request), ties for the arg ops,
all-NaN input, int32 sums past 2^31, int64 overflow (wrapped as NumPy's, flagged, warned),
float16 near its limits, var and std with every ddof (past the count: NumPy's inf or NaN)."""

import warnings

import grpc
import numpy
import pytest

import gpureduce
from reference import ARG_OPS, DTYPES, FLOATS, OPS, cast, check, data, same

BITS = {"nan": 0x7FC0, "inf": 0x7F80, "-inf": 0xFF80}  # bfloat16's


@pytest.fixture(scope="module")
def client(server):
    with gpureduce.Client(server.target, chunk_bytes=256 << 10) as opened:
        yield opened


def named(dtype):
    return {"input_dtype": "bfloat16"} if dtype == "bfloat16" else {}


def with_special(dtype, size, special, where):
    sent, values = data(dtype, size)
    sent = sent.copy()
    values = values.copy() if dtype == "bfloat16" else sent
    for position, value in zip(where, special.split(",")):
        if dtype == "bfloat16":
            sent[position] = BITS[value]
            values[position] = float(value)
        else:
            sent[position] = float(value)
    return sent, values


@pytest.mark.parametrize("size", [31, 1000003])
@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_and_infinities_anywhere(client, dtype, size):
    """Every op (and every nan form) in one request per case: the NaN propagates (an arg op
    names the first), the nan forms skip it, inf - inf is NaN."""
    cases = [("nan", [0]), ("nan", [size // 2]), ("nan", [size - 1]), ("nan,nan", [3, size - 2]),
             ("inf", [0]), ("-inf", [size // 2]), ("inf", [size - 1]), ("inf,-inf", [1, size - 1]),
             ("nan,inf", [size - 1, 0])]
    for special, where in cases:
        sent, values = with_special(dtype, size, special, where)
        answers = client.reduce(sent, ops=OPS, **named(dtype))
        for op, got in zip(OPS, answers):
            check(op, dtype, values, got, case=f"{special} at {where}")


@pytest.mark.parametrize("dtype", FLOATS)
def test_all_nan(client, dtype):
    sent, values = with_special(dtype, 5, ",".join(["nan"] * 5), range(5))
    for op in OPS:
        if op in ("nanargmin", "nanargmax"):  # NumPy: ValueError, All-NaN slice encountered
            with pytest.raises(gpureduce.Error) as error:
                client.reduce(sent, op, **named(dtype))
            assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT
            assert "NaN" in error.value.message
            continue
        check(op, dtype, values, client.reduce(sent, op, **named(dtype)), case="all NaN")


@pytest.mark.parametrize("size", [31, 1000003])
@pytest.mark.parametrize("dtype", DTYPES)
def test_ties_go_to_the_first(client, dtype, size):
    sent, values = data(dtype, size)
    sent = sent.copy()
    values = values.copy() if dtype == "bfloat16" else sent
    low, high = numpy.argmin(values), numpy.argmax(values)
    # The extremes again, before and after the first (across chunks in the large array).
    for i in {size // 3, size - 1, 2}:
        sent[i], values[i] = sent[low], values[low]
    for i in {size // 4, size - 2}:
        sent[i], values[i] = sent[high], values[high]
    for op in ("argmin", "argmax", "nanargmin", "nanargmax"):
        check(op, dtype, values, client.reduce(sent, op, **named(dtype)), case="ties")
    if dtype in FLOATS:  # two NaNs: the first is every arg op's answer; the nan forms skip it
        sent, values = with_special(dtype, size, "nan,nan", [size - 3, size // 5])
        sent[size // 2], values[size // 2] = sent[low], values[low]
        for op in ("argmin", "argmax", "nanargmin", "nanargmax"):
            check(op, dtype, values, client.reduce(sent, op, **named(dtype)), case="NaN ties")


def test_int32_sums_past_2_to_the_31_are_exact(client):
    x = numpy.full(1000003, 2**31 - 1, numpy.int32)
    total = client.reduce(x, "sum")
    assert type(total) is numpy.int64 and total == (2**31 - 1) * 1000003 == numpy.sum(x)
    assert client.reduce(x, "mean") == numpy.float64(2**31 - 1)
    assert client.reduce(-x - 1, "sum") == -(2**31) * 1000003
    assert client.reduce(x, "sum", dtype=numpy.int32) == numpy.sum(x, dtype=numpy.int32)


def test_int64_overflow_wraps_as_numpy_and_warns(client):
    x = numpy.array([2**62, 2**62, 2**62], numpy.int64)
    with pytest.warns(gpureduce.OverflowWarning, match="sum of int64 overflowed"):
        total = client.reduce(x, "sum")
    with numpy.errstate(over="ignore"):
        assert type(total) is numpy.int64 and total == numpy.sum(x) == -(2**62)
    with pytest.warns(gpureduce.OverflowWarning):
        result = client.reduce_result(x, ops=["nansum", "max", "prod"])
    assert [r.overflow for r in result.results] == [True, False, True]
    assert result.values[2] == numpy.prod(x) == 0  # 2^186 modulo 2^64
    threes = numpy.full(41, 3, numpy.int64)  # 3^41 > 2^63
    with pytest.warns(gpureduce.OverflowWarning):
        assert client.reduce(threes, "prod") == numpy.prod(threes)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # exact answers that fit never warn
        back = numpy.array([2**62, 2**62, -(2**62), -(2**62), 5], numpy.int64)
        assert client.reduce(back, "sum") == 5  # the running sum overflowed, the answer fits
        assert client.reduce(numpy.array([2**40, 2**40, 0], numpy.int64), "prod") == 0
        # +2^63 on the way, -2^63 at the end: the exact product fits, wherever the array is cut
        through = numpy.ones(1000003, numpy.int64)
        through[[0, 500001, 1000002]] = [-(2**63), -1, -1]
        assert client.reduce(through, "prod") == -(2**63)
        big = numpy.full(1000003, 2**31 - 1, numpy.int32)  # int32 data: int64 sums never wrap
        assert client.reduce(big, "sum") == numpy.sum(big)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpureduce.OverflowWarning)
        with pytest.raises(gpureduce.OverflowWarning):
            client.reduce(x, "sum")


def test_integer_dtype_wraps_as_numpy(client):
    x = numpy.array([2**31 - 1, 1, 5], numpy.int32)
    for dtype in (numpy.int32, numpy.int64, numpy.float64, numpy.float32, numpy.float16):
        got = client.reduce(x, "sum", dtype=dtype)
        assert type(got) is dtype and got == numpy.sum(x, dtype=dtype), dtype  # noqa


def test_float16_near_its_limits(client):
    largest, tiny = 65504.0, 2.0**-24  # the largest float16, the smallest subnormal
    cases = {
        "overflow to inf": [largest, largest],
        "tie to even, inf": [largest, 16.0],   # 65520: halfway to 65536, rounds up: inf
        "just below the tie": [largest, 15.0],  # 65519 rounds down to 65504
        "cancels back": [largest, largest, -largest, -largest, 1.0],  # exact: 1
        "subnormals": [tiny, tiny, tiny],
        "mean of the largest": [largest, largest, largest],
        "var past the range": [largest, -largest],
        "prod underflow": [tiny, 0.5],
        "prod back in range": [largest, largest, 2.0**-20],
    }
    for case, values in cases.items():
        x = numpy.array(values, numpy.float16)
        answers = client.reduce(x, ops=OPS)
        for op, got in zip(OPS, answers):
            check(op, "float16", x, got, case=case)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int32", "int64"])
def test_var_and_std_with_every_ddof(client, dtype):
    for size in (1, 2, 31):
        sent, values = data(dtype, size)
        for ddof in (0, 1, 0.5, size - 1, size, size + 1, size + 7):
            ops = ["var", "std", "nanvar", "nanstd"]
            answers = client.reduce(sent, ops=ops, ddof=ddof, **named(dtype))
            for op, got in zip(ops, answers):
                check(op, dtype, values, got, ddof=ddof, case=f"ddof={ddof}")


def test_constant_data_has_no_variance(client):
    for dtype in DTYPES:
        sent, values = cast(numpy.full(1000003, 3.0), dtype)
        assert same(client.reduce(sent, "var", **named(dtype)), 0.0)
        assert same(client.reduce(sent, "std", ddof=1000003, **named(dtype)), numpy.nan)


def test_the_arg_ops_answer_an_int64_index(client):
    for dtype in DTYPES:
        sent, values = data(dtype, 31)
        result = client.reduce_result(sent, ops=sorted(ARG_OPS), **named(dtype))
        for r in result.results:
            assert type(r.value) is numpy.int64 and r.index == r.value  # noqa
            assert same(r.element, values[r.index])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_products_never_overflow_or_underflow_on_the_way(client, dtype):
    """PROD is exact to its final rounding (the issue's cases): NumPy's sequential product
    overflows midway and answers NaN for [2]*2000 + [0]; the exact product is 0."""
    big = {"float16": 60000.0}.get(dtype, 1e30)
    cases = {"zero then huge": [0.0] + [big] * 200, "huge then zero": [2.0] * 2000 + [0.0],
             "up and back down": [2.0] * 1000 + [0.5] * 1000 + [3.0],
             "down and back up": [0.5] * 1000 + [2.0] * 999}
    for case, values in cases.items():
        sent, values = cast(numpy.array(values), dtype)
        for op in ("prod", "nanprod"):
            check(op, dtype, values, client.reduce(sent, op, **named(dtype)), case=case)
