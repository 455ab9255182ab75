"""Array requests offline (no server): the Client's wire messages (the spec's shape, axes,
keepdims and segments, in the first chunk of a stream), its decoding of OpResult.shape and
.data, and its checks of the answer, against NumPyServer: a stand-in that answers the contract
(proto/gpureduce/v1/reduce.proto) with NumPy, so that test_axes.py's checks run here too."""

import warnings

import grpc
import numpy
import pytest

import gpureduce
from gpureduce import _arrays, _dtypes
from gpureduce.v1 import reduce_pb2
from axes_reference import _product, make
from reference import ARG_OPS, EXTREMA, MOMENTS, result_dtype
from test_axes import check_request

WIRE = {"float32": "<f4", "float16": "<f2", "bfloat16": "<u2", "float64": "<f8",
        "int32": "<i4", "int64": "<i8"}


class Refusal(grpc.RpcError):
    def __init__(self, code, message):
        super().__init__(message)
        self._code, self._message = code, message

    def code(self):
        return self._code

    def details(self):
        return self._message


def _answer(op, dtype, values, axis, keepdims, ddof):
    """One op's result array and the count of integer results that wrapped."""
    where = dict(axis=axis, keepdims=keepdims)
    if op in ARG_OPS:
        try:
            return getattr(numpy, op)(values, **where), 0
        except ValueError as error:
            raise Refusal(grpc.StatusCode.INVALID_ARGUMENT, f"{op}: {error}") from None
    if values.dtype.kind == "i" and op in EXTREMA:
        return getattr(numpy, op)(values, **where), 0
    if values.dtype.kind == "i" and op in ("sum", "prod", "nansum", "nanprod"):
        exact = getattr(numpy, op.replace("nan", ""))(values.astype(object), **where)
        exact = numpy.asarray(exact, dtype=object)
        wrapped = numpy.vectorize(lambda v: (v + 2**63) % 2**64 - 2**63, otypes=[object])(exact)
        return wrapped.astype(numpy.int64), int(numpy.sum(wrapped != exact))
    wide = values.astype(numpy.float64)
    with numpy.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if op == "sum_squares":
            value = numpy.sum(wide * wide, **where)
        elif "prod" in op:
            value = _product(wide, axis, keepdims, op.startswith("nan"))
        elif op in MOMENTS:
            value = getattr(numpy, op)(values if values.dtype.kind == "i" else wide, ddof=ddof,
                                       **where)
        else:
            value = getattr(numpy, op)(wide, **where)
    want = result_dtype(op, dtype)
    if want == "bfloat16":
        return _arrays.round_to_bfloat16(value).view(numpy.uint32) >> 16, 0
    with numpy.errstate(all="ignore"):
        return numpy.asarray(value).astype(want), 0


class NumPyServer:
    """Answers Reduce and ReduceStream messages as the contract says (array requests only)."""

    def __init__(self):
        self.requests = []  # the specs received
        self.chunks = []    # each request's messages, as sent

    def unary(self, message, timeout=None, metadata=None):
        request = reduce_pb2.ReduceRequest.FromString(message)
        self.chunks.append([request])
        return self.answer(request.spec, request.data)

    def stream(self, messages, timeout=None, metadata=None):
        chunks = [reduce_pb2.ReduceChunk.FromString(m) for m in messages]
        self.chunks.append(chunks)
        assert all(not c.HasField("spec") for c in chunks[1:]), "the spec goes in the first chunk"
        return self.answer(chunks[0].spec, b"".join(c.data for c in chunks))

    def answer(self, spec, data):
        self.requests.append(spec)
        dtype = _dtypes.dtype_name(spec.dtype)
        values = numpy.frombuffer(data, WIRE[dtype])
        if dtype == "bfloat16":
            values = _arrays.bfloat16_values(values)
        assert spec.expected_count == values.size
        ops = [reduce_pb2.Op.Name(o).lower() for o in (spec.ops or [spec.op])]
        response = reduce_pb2.ReduceResponse(dtype=spec.dtype or reduce_pb2.FLOAT32,
                                             count=values.size)
        for op in ops:
            if spec.segments:
                bounds = numpy.cumsum([0, *spec.segments])
                parts = [_answer(op, dtype, values[a:b], None, False, spec.ddof)
                         for a, b in zip(bounds[:-1], bounds[1:])]
                result = numpy.array([p[0] for p in parts]).reshape(len(parts))
                wrapped = sum(p[1] for p in parts)
            else:  # no shape: a classic request, the array 1-D
                shaped = values.reshape(tuple(spec.shape) or (values.size,))
                if len(set(a % shaped.ndim for a in spec.axes)) != len(spec.axes):
                    raise Refusal(grpc.StatusCode.INVALID_ARGUMENT, "spec.axes repeats an axis")
                axis = tuple(spec.axes) or None
                if op in ARG_OPS and axis is not None:
                    axis = axis[0]
                result, wrapped = _answer(op, dtype, shaped, axis, spec.keepdims, spec.ddof)
            want = "int64" if op in ARG_OPS else result_dtype(op, dtype)
            result = numpy.asarray(result).astype(WIRE[want])
            message = response.results.add(
                op=reduce_pb2.Op.Value(op.upper()), dtype=_dtypes.DTYPES[want][0],
                overflow=wrapped > 0, index=-1)
            if spec.shape or spec.segments:
                message.shape.extend(result.shape)
                message.data, message.overflow_count = result.tobytes(), wrapped
            if result.size == 1:  # the scalar fields hold a one-element answer too
                one = result.reshape(())
                number = _arrays.bfloat16_values(one) if want == "bfloat16" else one
                message.value = float(number)
                if want in ("int32", "int64"):
                    message.int_value = int(one)
                if op in ARG_OPS:
                    message.index = int(one)
        response.value = response.results[0].value
        return response


@pytest.fixture
def fake():
    server = NumPyServer()
    client = gpureduce.Client("127.0.0.1:1", chunk_bytes=1 << 12)
    client._reduce_raw, client._reduce_stream_raw = server.unary, server.stream
    server.client = client
    yield server
    client.close()


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int32", "int64"])
@pytest.mark.parametrize("shape", [(1,), (2, 31), (3, 1, 5), (2, 3, 4, 5)])
def test_the_matrix_against_numpy_server(fake, dtype, shape):
    """test_axes.py's checks, answered by NumPyServer: the client and the checks agree."""
    sent, values = make(dtype, shape, numpy.random.default_rng(len(shape)))
    for axis in (None, 0, -1, tuple(range(len(shape))), ()):
        for keepdims in (False, True):
            check_request(fake.client, dtype, sent, values, axis, keepdims, 1)


def test_the_spec_carries_shape_axes_and_keepdims(fake):
    x = numpy.arange(24, dtype=numpy.float32).reshape(2, 3, 4)
    fake.client.reduce(x, "sum", axis=(0, -1), keepdims=True)
    spec = fake.requests[-1]
    assert list(spec.shape) == [2, 3, 4] and list(spec.axes) == [0, -1] and spec.keepdims
    assert spec.expected_count == 24 and not spec.segments
    fake.client.reduce(x, "max", axis=())  # reduce nothing: a trailing 1-length axis reduced
    assert list(fake.requests[-1].shape) == [2, 3, 4, 1] and list(fake.requests[-1].axes) == [3]
    assert fake.client.reduce(numpy.array(2.5, numpy.float32), keepdims=True) == 2.5  # 0-d
    assert list(fake.requests[-1].shape) == [1] and not fake.requests[-1].axes


def test_a_streamed_array_request_has_its_spec_in_the_first_chunk(fake):
    x = numpy.arange(3001, dtype=numpy.float64).reshape(3001, 1)
    answer = fake.client.reduce(x, "sum", axis=0)
    assert answer.shape == (1,) and answer[0] == x.sum()
    chunks = fake.chunks[-1]
    assert len(chunks) == -(-x.nbytes // (1 << 12)) and list(chunks[0].spec.shape) == [3001, 1]


def test_reduce_many_sends_segments(fake):
    arrays = [numpy.arange(n, dtype=numpy.int32) for n in (0, 1, 5, 0, 2)]
    assert fake.client.reduce_many(arrays, "sum") == [0, 0, 10, 0, 1]
    spec = fake.requests[-1]
    assert list(spec.segments) == [0, 1, 5, 0, 2] and not spec.shape and spec.expected_count == 8
    pairs = fake.client.reduce_many(arrays[1:3], ops=["max", "argmax"])
    assert pairs == [(0, 0), (4, 4)] and type(pairs[1][0]) is numpy.int32  # noqa: E721
    with pytest.warns(gpureduce.OverflowWarning, match="in 1 of its 2 results"):
        fake.client.reduce_many([numpy.array([2**62] * 2, numpy.int64), [1, 2]], "sum")


def test_answers_that_break_the_contract_are_errors(fake):
    x = numpy.ones((2, 3), numpy.float32)
    good = fake.answer

    def no_shape(result):
        result.ClearField("shape")

    def short_data(result):
        result.data = result.data[:-1]

    def no_array(result):  # a server that predates array requests
        result.ClearField("shape")
        result.ClearField("data")

    for broken, code in ((no_shape, grpc.StatusCode.INTERNAL),
                         (short_data, grpc.StatusCode.INTERNAL),
                         (no_array, grpc.StatusCode.UNIMPLEMENTED)):
        def answer(spec, data, broken=broken):
            response = good(spec, data)
            broken(response.results[0])
            return response

        fake.answer = answer
        with pytest.raises(gpureduce.Error) as error:
            fake.client.reduce(x, "sum", axis=1)
        assert error.value.code == code, error.value


def test_rounding_to_bfloat16_in_arrays_is_the_scalar_rounding():
    rng = numpy.random.default_rng(5)
    values = numpy.concatenate([rng.standard_normal(2000) * numpy.exp2(rng.integers(-140, 128,
                                                                                    2000)),
                                [0.0, -0.0, numpy.inf, -numpy.inf, 3.4e38, 1 + 2.0**-8]])
    got = _arrays.round_to_bfloat16(values)
    want = [_dtypes.round_to_bfloat16(float(v)) for v in values]
    assert got.dtype == numpy.float32 and numpy.array_equal(got, numpy.float32(want))
    assert numpy.isnan(_arrays.round_to_bfloat16([numpy.nan]))[0]


def test_dtype_widens_float_payloads_and_refuses_truncation(fake):
    x = numpy.full((2, 3), 1 + 2.0**-10, numpy.float16)
    wide = fake.client.reduce(x, "sum", axis=1, dtype=numpy.float64)
    assert fake.requests[-1].dtype == reduce_pb2.FLOAT64 and wide.tolist() == [3 + 3 * 2.0**-10] * 2
    result = fake.client.reduce_result(x, ops=["mean", "argmin"], axis=0, dtype="float32")
    assert [r.dtype for r in result.results] == ["float16", "int64"]
    assert result.values[0].dtype == numpy.float32 and result.values[1].dtype == numpy.int64
    with pytest.raises(TypeError, match="truncate every element"):
        fake.client.reduce(x, "mean", axis=0, dtype=numpy.int32)
    assert len(fake.requests) == 2  # the refusal sent nothing


def test_reduce_many_sends_each_array_flat_and_once(fake):
    arrays = [numpy.arange(6.0).reshape(2, 3)[:, ::2], numpy.ones(3), numpy.zeros(0), [2.5]]
    with pytest.raises(TypeError, match="not of float64 and float32"):  # a list of floats: float32
        fake.client.reduce_many(arrays, "sum")
    assert fake.client.reduce_many(arrays[:3], "sum") == [10.0, 3.0, 0.0]
    assert list(fake.requests[-1].segments) == [4, 3, 0]
    bits = [numpy.array([0x3F80], numpy.uint16), numpy.array([0x4000, 0x4040], numpy.int16)]
    assert fake.client.reduce_many(bits, "max", input_dtype="bfloat16") == [1.0, 3.0]
    with pytest.raises(ValueError, match="at least one array"):
        fake.client.reduce_many_result([], "sum")
