"""Axes, keepdims and segments (issue 23) against the real server: a NumPy-reference matrix of
shapes from 1-D to 4-D (1-length axes, awkward sizes, a (4096, 1024) float16 array), every axis,
tuples of axes, negative axes, keepdims and axis=(), every op (the nan forms, var and std with a
ddof) on every dtype, with NaN in some rows, on fresh random data of mixed sign each run (the
seed is printed on failure; GPUREDUCE_TEST_SEED repeats a run); reduce_many over 10,000 arrays
of mixed lengths (empty and one-element ones too); a streamed array request cut inside rows and
elements; overflow, dtype=, 0-d and zero-length arrays; and the refusals: NumPy's before sending,
the server's INVALID_ARGUMENT (naming the field) for a spec that reaches it.
Offline pieces (encoding, decoding, the stream's chunks): test_axes_wire.py."""

import warnings

import grpc
import numpy
import pytest

import gpureduce
from gpureduce.v1 import reduce_pb2, reduce_pb2_grpc
from axes_reference import compare, expected, make
from reference import ARG_OPS, OPS, check, same

DTYPES = ["float32", "float16", "bfloat16", "float64", "int32", "int64"]
SHAPES = [(1,), (7,), (2, 31), (3, 1, 5), (1, 4, 1, 3), (2, 3, 4, 5)]
REDUCING = [op for op in OPS if op not in ARG_OPS]  # one request for these, one for the arg ops
ARGS = sorted(ARG_OPS)


@pytest.fixture(scope="module")
def client(server):
    with gpureduce.Client(server.target) as opened:
        yield opened


def named(dtype):
    return {"input_dtype": "bfloat16"} if dtype == "bfloat16" else {}


def axis_choices(ndim):
    """None, every axis, -1, some tuples (negative ones too), every axis as a tuple, ()."""
    choices = [None, *range(ndim), -1]
    if ndim >= 2:
        choices += [(0, -1), (-1, 0)]
    if ndim >= 3:
        choices += [(0, 2), (1, -1)]
    if ndim >= 4:
        choices += [(0, 1, 3), (-3, -2)]
    return choices + [tuple(range(ndim)), ()]


def check_request(client, dtype, sent, values, axis, keepdims, ddof, ops=REDUCING, **options):
    """Every op of `ops` (one request) against NumPy; the arg ops (another) where NumPy takes the
    axis. An arg op NumPy refuses (an all-NaN slice) must be refused as INVALID_ARGUMENT."""
    label = f"{dtype} {values.shape} axis={axis} keepdims={keepdims} ddof={ddof}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gpureduce.OverflowWarning)  # int prods wrap as NumPy's
        answers = client.reduce(sent, ops=ops, ddof=ddof, axis=axis, keepdims=keepdims,
                                **named(dtype), **options)
    for op, got in zip(ops, answers):
        answer, scale = expected(op, values, axis, keepdims, ddof)
        compare(op, dtype, got, answer, scale, f"{op} of {label}")
    if isinstance(axis, tuple):
        return
    for arg_ops in (ARGS, ["argmin", "argmax"]):
        try:
            answers = [expected(op, values, axis, keepdims, 0)[0] for op in arg_ops]
        except ValueError:  # NumPy: All-NaN slice encountered
            with pytest.raises(gpureduce.Error) as error:
                client.reduce(sent, ops=arg_ops, axis=axis, keepdims=keepdims, **named(dtype))
            assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT, label
            continue
        got = client.reduce(sent, ops=arg_ops, axis=axis, keepdims=keepdims, **named(dtype))
        for op, one, answer in zip(arg_ops, got, answers):
            compare(op, dtype, one, answer, None, f"{op} of {label}")
        return


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_axis_and_op_matches_numpy(client, rng, dtype, shape):
    sent, values = make(dtype, shape, rng)
    for i, axis in enumerate(axis_choices(len(shape))):
        for keepdims in (False, True):
            ddof = (0, 1, 2.5)[(i + keepdims) % 3]
            check_request(client, dtype, sent, values, axis, keepdims, ddof)


def test_a_large_float16_array_along_each_axis(client, rng):
    sent, values = make("float16", (4096, 1024), rng, nan=False)
    rows = rng.choice(4096, 3, replace=False)
    sent[rows, rng.choice(1024, 3)] = numpy.nan  # NaN in three rows, and so in three columns
    for axis, keepdims in ((1, False), (0, True), ((-1, -2), True)):
        check_request(client, "float16", sent, values, axis, keepdims, 1)


def test_several_ops_answer_one_array_each(client, rng):
    sent, values = make("float32", (5, 6, 7), rng)
    total, top, where = client.reduce(sent, ops=["sum", "max", "argmax"], axis=1)
    assert total.shape == top.shape == where.shape == (5, 7)
    assert numpy.array_equal(top, values.max(axis=1), equal_nan=True)
    assert numpy.array_equal(where, numpy.argmax(values, axis=1))
    result = client.reduce_result(sent, "mean", axis=(0, 2), keepdims=True)
    assert result.scalar.shape == (1, 6, 1) and result.results[0].dtype == "float32"
    assert result.count == values.size


@pytest.mark.parametrize("dtype", DTYPES)
def test_views_and_zero_d_arrays(client, rng, dtype):
    sent, values = make(dtype, (6, 10), rng, nan=False)
    view = sent[:, ::3].T  # not contiguous: made contiguous, its shape sent
    compare("sum", dtype, client.reduce(view, "sum", axis=0, **named(dtype)),
            *expected("sum", values[:, ::3].T, 0, False, 0), f"{dtype} view")
    # 0-d arrays (not NumPy scalars, which the client reads as Python numbers: float32)
    scalar_sent, scalar_values = numpy.asarray(sent[2, 3]), numpy.asarray(values[2, 3])
    for kwargs in ({"keepdims": True}, {"axis": ()}, {"axis": (), "keepdims": True}):
        got = client.reduce(scalar_sent, "max", **kwargs, **named(dtype))
        compare("max", dtype, got, numpy.max(scalar_values, **kwargs), None, f"0-d {kwargs}")
    with pytest.raises(gpureduce._arrays.AxisError):
        client.reduce(scalar_sent, "sum", axis=0, **named(dtype))


def test_zero_length_axes(client):
    x = numpy.zeros((2, 0, 3), numpy.int32)
    assert numpy.array_equal(client.reduce(x, "sum", axis=1), numpy.zeros((2, 3), numpy.int64))
    ones = client.reduce(x, "prod", axis=(1, 2), keepdims=True)
    assert ones.dtype == numpy.int64 and numpy.array_equal(ones, numpy.ones((2, 1, 1)))
    for axis in (0, (0, 2), ()):  # no result reduces nothing: answered, as NumPy answers
        got = client.reduce(x, "min", axis=axis)
        assert got.dtype == numpy.int32 and got.shape == numpy.min(x, axis=axis).shape
    with pytest.raises(gpureduce.Error) as error:  # NumPy: zero-size array ... no identity
        client.reduce(x, "min", axis=1)
    assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT


def test_a_streamed_array_request_cut_inside_rows_and_elements(server, rng):
    sent, values = make("float64", (37, 53), rng)
    with gpureduce.Client(server.target, chunk_bytes=1001) as client:  # 1001: inside an element
        for axis in (0, 1, (0, 1)):
            result = client.reduce_result(sent, ops=REDUCING, axis=axis, keepdims=True, ddof=1)
            assert result.timing["chunks"] == -(-sent.nbytes // 1001)
            for op, got in zip(REDUCING, result.values):
                compare(op, "float64", got, *expected(op, values, axis, True, 1), f"{op} {axis}")
        wide, _ = make("float32", (300, 257), rng)  # a leading axis: one accumulator per column
        assert numpy.array_equal(client.reduce(wide, "argmax", axis=0),
                                 numpy.argmax(wide, axis=0))
        assert numpy.array_equal(client.reduce(wide, "nanmax", axis=0),
                                 numpy.nanmax(wide, axis=0), equal_nan=True)


def test_integer_overflow_along_an_axis_warns_with_its_count(client):
    x = numpy.array([[2**62, 2**62, 2**62], [1, 2, 3], [2**62, 2**62, -(2**62)]], numpy.int64)
    with pytest.warns(gpureduce.OverflowWarning, match="sum of int64 overflowed int64 in 1 of"):
        result = client.reduce_result(x, "sum", axis=1)
    with numpy.errstate(over="ignore"):
        assert numpy.array_equal(result.scalar, numpy.sum(x, axis=1))
    assert result.results[0].overflow and result.results[0].overflow_count == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert numpy.array_equal(client.reduce(x, "max", axis=0), x.max(axis=0))


def test_dtype_rounds_each_exact_result_once(client, rng):
    sent, values = make("float16", (4, 31), rng, nan=False)
    wide = client.reduce(sent, "sum", axis=1, dtype=numpy.float64)
    # float16 values with exponents in [-3, 3): their sums are exact in float64
    assert wide.dtype == numpy.float64 and numpy.array_equal(wide, values.astype("f8").sum(1))
    narrow = client.reduce(values.astype(numpy.float64), "mean", axis=0, dtype=numpy.float32)
    assert narrow.dtype == numpy.float32
    assert numpy.array_equal(narrow, values.astype("f8").mean(axis=0).astype(numpy.float32))
    ints = numpy.full((3, 4), 2**31 - 1, numpy.int32)
    assert numpy.array_equal(client.reduce(ints, "sum", axis=0, dtype=numpy.int32),
                             numpy.sum(ints, axis=0, dtype=numpy.int32))
    with pytest.raises(TypeError, match="truncate every element"):
        client.reduce(sent, "sum", axis=0, dtype=numpy.int64)


def test_reduce_many_over_ten_thousand_arrays(client, rng):
    lengths = rng.choice([0, 1, 2, 3, 17, 31, 64, 500], 10000,
                         p=[0.1, 0.2, 0.15, 0.15, 0.15, 0.15, 0.05, 0.05])
    arrays = [make("float32", (int(n),), rng)[0] for n in lengths]
    ops = ["sum", "nanprod", "var", "nansum"]  # each has an answer for an empty array
    answers = client.reduce_many(arrays, ops=ops, ddof=1)
    assert len(answers) == len(arrays)
    for i in list(numpy.flatnonzero(lengths <= 1)[:300]) + list(rng.choice(10000, 1500)):
        for op, got in zip(ops, answers[i]):
            check(op, "float32", arrays[i], got, ddof=1, case="reduce_many")
    nonempty = [a for a in arrays if a.size]
    smallest = client.reduce_many(nonempty, "min")
    assert all(type(s) is numpy.float32 for s in smallest)  # noqa: E721
    assert numpy.array_equal(smallest, [a.min() for a in nonempty], equal_nan=True)
    where = client.reduce_many(nonempty, "argmax")
    assert where == [numpy.argmax(a) for a in nonempty]
    for i in rng.choice(len(nonempty), 20):  # as reduce answers each alone
        assert same(client.reduce(nonempty[i], "std"), client.reduce_many([nonempty[i]], "std")[0])
    with pytest.raises(gpureduce.Error) as error:  # an empty array has no min
        client.reduce_many(arrays, "min")
    assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT


def test_reduce_many_of_every_dtype(client, rng):
    for dtype in DTYPES:
        pairs = [make(dtype, (n,), rng) for n in (0, 1, 5, 1000)]
        got = client.reduce_many([p[0] for p in pairs], "sum", **named(dtype))
        for (_, values), one in zip(pairs, got):
            check("sum", dtype, values, one, case="reduce_many")
    assert client.reduce_many([], "sum") == []
    with pytest.raises(TypeError, match="arrays of one dtype"):
        client.reduce_many([numpy.zeros(2, numpy.float32), numpy.zeros(2)], "sum")


def test_numpys_refusals_are_raised_before_sending():
    with gpureduce.Client("127.0.0.1:1") as client:  # nothing listens: refused before any call
        x = numpy.zeros((2, 3), numpy.float32)
        with pytest.raises(gpureduce._arrays.AxisError, match="axis 2 is out of bounds"):
            client.reduce(x, "sum", axis=2)
        with pytest.raises(ValueError, match="out of bounds"):  # AxisError is a ValueError
            client.reduce(x, "sum", axis=(0, -3))
        with pytest.raises(ValueError, match="duplicate value in 'axis'"):
            client.reduce(x, "sum", axis=(1, -1))
        with pytest.raises(TypeError, match="argmin takes one axis"):
            client.reduce(x, "argmin", axis=(0, 1))
        with pytest.raises(TypeError, match="nanargmax takes one axis"):
            client.reduce(x, ops=["sum", "nanargmax"], axis=(0,))
        with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
            client.reduce(x, "sum", axis=[0])


def raw(server, spec, values=None):
    """A Reduce sent as the wire carries it, past the client's checks."""
    data = (numpy.arange(6, dtype=numpy.float32) if values is None else values).tobytes()
    with grpc.insecure_channel(server.target) as channel:
        stub = reduce_pb2_grpc.ReducerStub(channel)
        return stub.Reduce(reduce_pb2.ReduceRequest(spec=spec, data=data), timeout=30)


@pytest.mark.parametrize("fields,named_field", [
    ({"shape": [2, 3], "axes": [2]}, "axes"),            # out of range
    ({"shape": [2, 3], "axes": [-3]}, "axes"),
    ({"shape": [2, 3], "axes": [1, -1]}, "axes"),        # repeated
    ({"shape": [1, 2, 3], "axes": [1, 2], "op": reduce_pb2.ARGMIN}, "axes"),  # an arg op: 2 axes
    ({"shape": [1, 2, 3], "axes": [0, -1], "ops": [reduce_pb2.SUM, reduce_pb2.NANARGMAX]},
     "axes"),
    ({"shape": [2, 4]}, "shape"),                         # 8 elements for 6
    ({"segments": [2, 2]}, "segments"),                   # 4 elements for 6
])
def test_the_server_refuses_a_bad_spec_naming_the_field(server, fields, named_field):
    defaults = {} if "ops" in fields else {"op": reduce_pb2.SUM}
    spec = reduce_pb2.ReduceSpec(**{**defaults, **fields})
    with pytest.raises(grpc.RpcError) as error:
        raw(server, spec)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT, error.value.details()
    assert named_field in error.value.details(), error.value.details()


def test_the_server_takes_negative_axes_as_numpy(server):
    spec = reduce_pb2.ReduceSpec(ops=[reduce_pb2.SUM, reduce_pb2.ARGMAX], shape=[2, 3],
                                 axes=[-2], keepdims=True)
    response = raw(server, spec)
    for message, want in zip(response.results, ([[3.0, 5.0, 7.0]], [[1, 1, 1]])):
        assert list(message.shape) == [1, 3]
        dtype = numpy.float32 if message.op == reduce_pb2.SUM else numpy.int64
        assert numpy.frombuffer(message.data, dtype).tolist() == want[0]


def test_torch_tensors_along_axes(client):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    t = torch.arange(-30, 30, dtype=torch.float32).reshape(3, 4, 5)
    view = t.transpose(0, 2)  # not contiguous
    got = client.reduce(view, "sum", axis=(0, -1), keepdims=True)
    assert isinstance(got, numpy.ndarray) and got.shape == (1, 4, 1)
    assert numpy.array_equal(got, view.sum(dim=(0, 2), keepdim=True).numpy())
    half = t.to(torch.bfloat16)
    top = client.reduce(half, "max", axis=1)
    assert top.dtype == numpy.float32 and numpy.array_equal(top, half.amax(dim=1).float().numpy())
    assert numpy.array_equal(client.reduce(t, "argmin", axis=-1), t.argmin(dim=-1).numpy())


def test_shared_memory_regions_along_axes(shm_server, rng):
    sent, values = make("float32", (6, 50), rng)
    with gpureduce.Client(shm_server.target) as client:
        with client.shared_memory(sent) as region:  # the region knows the array's shape
            for axis in (0, -1, (0, 1)):
                compare("nansum", "float32", region.reduce("nansum", axis=axis),
                        *expected("nansum", values, axis, False, 0), f"region axis={axis}")
            top, where = region.reduce(ops=["max", "argmax"], axis=1, keepdims=True)
            assert top.shape == where.shape == (6, 1)
            assert numpy.array_equal(where, numpy.argmax(values, axis=1, keepdims=True))
            part = region.reduce("max", byte_size=40, axis=0)  # part of it: 1-D
            assert same(part, numpy.max(values.reshape(-1)[:10]))
            result = client.reduce_shared(region.name, 0, sent.nbytes, "min", shape=(3, 100),
                                          axis=0)
            assert numpy.array_equal(result.scalar, numpy.min(values.reshape(3, 100), axis=0),
                                     equal_nan=True)
            with pytest.raises(TypeError, match="rounded twice"):
                region.reduce("sum", axis=0, dtype=numpy.float64)
