"""The NumPy-reference matrix against the real server: every dtype x every op at sizes 1, 2, 31
and 1,000,003 (unary and streamed), `client.reduce(x, op)` equal to NumPy's answer in value and
dtype (reference.check says where the exactly rounded answer stands in for NumPy's); several ops
in one request; `dtype=`; streams cut inside elements; empty arrays; refusals of other dtypes."""

import warnings

import grpc
import numpy
import pytest

import gpureduce
from reference import (DTYPES, FLOATS, MOMENTS, OPS, bfloat16_values, cast, check, data,
                       exact, same)

SIZES = [1, 2, 31, 1000003]


def reduce(client, sent, element_type, *args, **kwargs):
    """client.reduce, naming bfloat16 data (uint16 bits) so."""
    if element_type == "bfloat16":
        kwargs["input_dtype"] = "bfloat16"
    return client.reduce(sent, *args, **kwargs)


@pytest.fixture(scope="module")
def client(server):
    with gpureduce.Client(server.target) as opened:
        yield opened


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_op_of_every_dtype_matches_numpy(client, dtype, size):
    for op in OPS:
        sent, values = data(dtype, size, "prod" if "prod" in op else "general")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no overflow here: nothing may warn
            got = reduce(client, sent, dtype, op, ddof=1 if op in MOMENTS and size > 1 else 0)
        check(op, dtype, values, got, ddof=1 if op in MOMENTS and size > 1 else 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_several_ops_in_one_request_answer_as_each_alone(client, dtype):
    sent, values = data(dtype, 1000003)
    ops = [op for op in OPS if "prod" not in op][::-1]  # any order: answered in that order
    result = client.reduce_result(sent, ops=ops, ddof=1,
                                  input_dtype="bfloat16" if dtype == "bfloat16" else None)
    assert [r.op for r in result.results] == ops and result.dtype == dtype
    assert result.count == values.size and result.timing["chunks"] > 1  # one streamed read
    for op, got in zip(ops, result.values):
        check(op, dtype, values, got, ddof=1)
        assert same(got, reduce(client, sent, dtype, op, ddof=1))
    total, smallest, spread = reduce(client, sent, dtype, ops=("sum", "min", "std"))
    assert same(total, reduce(client, sent, dtype, "sum")) and same(smallest, values.min())
    assert same(spread, reduce(client, sent, dtype, "std"))


def test_the_five_op_request_of_the_issue(client):
    sent, values = data("float16", 1000003)
    answers = client.reduce(sent, ops=["sum", "min", "max", "mean", "std"])
    assert isinstance(answers, tuple) and len(answers) == 5
    assert all(type(a) is numpy.float16 for a in answers)  # pylint: disable=C0123
    for op, got in zip(["sum", "min", "max", "mean", "std"], answers):
        check(op, "float16", values, got)


@pytest.mark.parametrize("dtype", FLOATS)
def test_dtype_rounds_the_exact_result_once(client, dtype):
    sent, values = data(dtype, 31)
    exact_sum, _ = exact("sum", values)
    wide = reduce(client, sent, dtype, "sum", dtype=numpy.float64)
    assert type(wide) is numpy.float64  # pylint: disable=C0123
    assert abs(wide - exact_sum) <= 1e-15 * abs(exact_sum) + 1e-300
    if dtype in ("float16", "bfloat16", "float32"):  # the unrounded sum, not the float16 one
        assert wide == numpy.float64(exact_sum)
    # Several ops: each op's unrounded value (one more request each where the answer lacks it).
    total, mean = reduce(client, sent, dtype, ops=["sum", "mean"], dtype="float64")
    assert total == wide and abs(mean - exact_sum / 31) <= 1e-15 * abs(exact_sum)
    narrow = reduce(client, sent, dtype, "mean", dtype=numpy.float16)
    assert type(narrow) is numpy.float16 and narrow == numpy.float16(exact_sum / 31)  # noqa
    assert reduce(client, sent, dtype, "argmax", ddof=0) == numpy.argmax(values)
    with pytest.raises(TypeError, match="takes no dtype"):
        reduce(client, sent, dtype, "argmax", dtype=numpy.float64)
    with pytest.raises(TypeError, match="truncate every element"):
        reduce(client, sent, dtype, "sum", dtype=numpy.int64)
    with pytest.raises(TypeError, match="gpureduce answers in"):
        reduce(client, sent, dtype, "sum", dtype=numpy.complex64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("chunk_bytes", [7, 1001, (1 << 16) + 3])
def test_streams_cut_inside_elements(server, dtype, chunk_bytes):
    sent, values = data(dtype, 4099 if chunk_bytes < 100 else 100003)
    with gpureduce.Client(server.target, chunk_bytes=chunk_bytes) as client:
        result = client.reduce_result(sent, ops=["sum", "argmax", "var"],
                                      input_dtype="bfloat16" if dtype == "bfloat16" else None)
    assert result.timing["chunks"] == -(-sent.nbytes // chunk_bytes)
    for op, got in zip(["sum", "argmax", "var"], result.values):
        check(op, dtype, values, got)


@pytest.mark.parametrize("dtype", DTYPES)
def test_empty_arrays(client, dtype):
    sent, values = cast(numpy.zeros(0), dtype)
    for op in ("sum", "nansum", "prod", "nanprod"):
        check(op, dtype, values, reduce(client, sent, dtype, op))
    for op in ("min", "argmin", "nanargmax"):  # NumPy raises ValueError
        with pytest.raises(gpureduce.Error) as error:
            reduce(client, sent, dtype, op)
        assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT


def test_any_shape_and_layout_is_reduced_flat(client):
    x = data("int64", 1000003)[0][:999999].reshape(111, 9009)
    for view in (x, x[:, ::3], x.T, numpy.asfortranarray(x)):
        assert reduce(client, view, "int64", "argmax") == numpy.argmax(view)
        assert reduce(client, view, "int64", "sum") == numpy.sum(view)
    big_endian = data("float64", 31)[0].astype(">f8")
    assert reduce(client, big_endian, "float64", "max") == big_endian.max()


@pytest.mark.parametrize("array,named", [
    (numpy.zeros(3, numpy.uint8), "uint8"), (numpy.zeros(3, numpy.complex64), "complex64"),
    (numpy.zeros(3, bool), "bool"), (numpy.zeros(3, numpy.longdouble), "float128"),
    (numpy.zeros(3, numpy.uint16), "uint16"), (numpy.zeros(3, numpy.int16), "int16"),
    (numpy.zeros(3, numpy.uint64), "uint64"), (numpy.array(["a"]), "<U1"),
    (numpy.zeros(3, object), "object")])
def test_other_dtypes_are_refused_naming_the_supported_ones(array, named):
    with gpureduce.Client("127.0.0.1:1") as client:  # refused before any call
        with pytest.raises(TypeError) as error:
            client.reduce(array, "sum")
    message = str(error.value)
    assert f"not {named}" in message
    assert "float32, float16, bfloat16, float64, int32, int64" in message
    assert "input_dtype=\"bfloat16\"" in message


def test_bfloat16_by_name_and_refusals():
    with gpureduce.Client("127.0.0.1:1") as client:
        with pytest.raises(TypeError, match="uint16 or int16 array, not float32"):
            client.reduce(numpy.zeros(3, numpy.float32), input_dtype="bfloat16")
        with pytest.raises(TypeError, match="does not match the array's int32"):
            client.reduce(numpy.zeros(3, numpy.int32), input_dtype="float32")
        with pytest.raises(TypeError, match="not 'uint8'"):
            client.reduce(numpy.zeros(3, numpy.uint8), input_dtype="uint8")
        with pytest.raises(ValueError, match="unknown op 'median'"):
            client.reduce(numpy.zeros(3, numpy.float32), "median")
        with pytest.raises(ValueError, match="op or ops, not both"):
            client.reduce(numpy.zeros(3, numpy.float32), "sum", ops=["min"])
        with pytest.raises(ValueError, match="names an op twice"):
            client.reduce(numpy.zeros(3, numpy.float32), ops=["min", "min"])
        with pytest.raises(TypeError, match="third argument is ddof; name the kernel"):
            client.reduce(numpy.zeros(3, numpy.float32), "sum", "cpu")


def test_bfloat16_values_are_float32_scalars_of_bfloat16_values(client):
    bits = numpy.array([0x3F80, 0x3B00], numpy.uint16)  # 1 and 2^-9
    values = bfloat16_values(bits)
    total = client.reduce(bits, "sum", input_dtype="bfloat16")
    assert type(total) is numpy.float32 and total == 1.0  # 1 + 2^-9 rounds to 1 in bfloat16
    assert client.reduce(bits, "sum", input_dtype="bfloat16", dtype="float32") == values.sum()
    assert values.sum() == 1 + 2.0**-9
    assert client.reduce_result(bits, "sum", input_dtype="bfloat16").results[0].dtype == (
        "bfloat16")
    assert client.reduce(bits.view(numpy.int16), "max", input_dtype="bfloat16") == values[0]
