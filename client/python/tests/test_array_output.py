"""Results into a region (`out=`, ReduceSpec.output) against the real server started with
--allow-shared-memory: a (4096, 1024) float16 array's row sums, several ops along axes (each
op's array at the next multiple of 8, of mixed result types), reduce_many, a payload and its
results in one object; each answer a view of the region (no copy) equal to NumPy's, at the
offset the server announced, and every other byte of the region as it was (filled with a marker
first). The refusals: the server's (a region not registered writable, one too small, results
over the payload) and the client's before anything is sent (out= of a full reduction, dtype=,
not a region). Fresh random data of mixed sign each run (the seed is printed on failure;
GPUREDUCE_TEST_SEED repeats a run)."""

from multiprocessing import shared_memory

import grpc
import numpy
import pytest

import gpureduce
from gpureduce import _arrays
from axes_reference import compare, expected, make
from reference import same

MARKER = 0xA5


@pytest.fixture(scope="module")
def client(shm_server):
    with gpureduce.Client(shm_server.target) as opened:
        yield opened


def output_region(client, nbytes, writable=True):
    """A region of `nbytes` (a multiple of 8) for results, every byte MARKER."""
    marked = numpy.full(nbytes, MARKER, numpy.uint8).view(numpy.int64)
    return client.shared_memory(marked, writable=writable)


def region_bytes(region):
    return region.array.view(numpy.uint8)


def check_placement(region, result, start=0):
    """Each op's value is a view of the region at its announced output_offset: the first at the
    multiple of 8 from `start`, each next one at the multiple of 8 after the one before; every
    byte outside them still MARKER. Then fills the whole region with MARKER again (the views
    with it), for the next request."""
    memory = region_bytes(region)
    base = memory.__array_interface__["data"][0]
    written = numpy.zeros(memory.size, bool)
    at = start
    for r in result.results:
        view = r.value
        assert isinstance(view, numpy.ndarray) and not view.flags.owndata, r.op
        assert numpy.shares_memory(view, memory), r.op
        at = -(-at // 8) * 8
        assert r.output_offset == at, (r.op, r.output_offset, at)
        assert view.__array_interface__["data"][0] - base == at, r.op
        assert at + view.nbytes <= memory.size, r.op
        written[at:at + view.nbytes] = True
        at += view.nbytes
    untouched = memory[~written]
    assert numpy.all(untouched == MARKER), numpy.flatnonzero(~written)[untouched != MARKER][:10]
    memory[...] = MARKER


def test_a_float16_arrays_row_sums_into_a_region(client, rng):
    sent, values = make("float16", (4096, 1024), rng, nan=False)
    with output_region(client, 4096 * 2 + 24) as region:
        assert region.writable and region.region.writable
        assert [r.writable for r in client.list_shared_memory()] == [True]
        rows = client.reduce(sent, "sum", axis=1, out=region)
        assert rows.shape == (4096,) and rows.dtype == numpy.float16
        compare("sum", "float16", rows, *expected("sum", values, 1, False, 0), "rows into a region")
        assert numpy.shares_memory(rows, region.array)
        region_bytes(region)[:8192] = 0  # the view is the region's memory, not a copy
        assert numpy.all(rows == 0)
        region_bytes(region)[...] = MARKER
        result = client.reduce_result(sent, "sum", axis=1, out=(region, 8))
        assert numpy.array_equal(result.scalar, client.reduce(sent, "sum", axis=1))
        check_placement(region, result, start=8)


@pytest.mark.parametrize("dtype", ["float32", "int32", "bfloat16"])
@pytest.mark.parametrize("ops,axis", [
    (["sum", "max", "mean", "var"], (0, 2)),  # an arg op takes one axis: argmax goes below
    (["sum", "argmax", "mean", "var"], 2)], ids=["axes-0-2", "axis-2-argmax"])
def test_several_ops_each_at_the_next_multiple_of_8(client, rng, dtype, ops, axis):
    """(3, 5, 33) keepdims: 5 or 15 results per op, so a float32 array ends off a multiple of 8
    and the next one (an int64 argmax, a float64 mean of int32) starts after a gap."""
    sent, values = make(dtype, (3, 5, 33), rng, nan=False)
    named = {"input_dtype": "bfloat16"} if dtype == "bfloat16" else {}
    with output_region(client, 1024) as region:
        for start in (0, 12):  # from the region's start, and from byte 12 (the first at 16)
            result = client.reduce_result(sent, ops=ops, ddof=1, axis=axis, keepdims=True,
                                          out=(region, start), **named)
            for r in result.results:
                got = r.value
                if r.dtype == "bfloat16":  # a view of the bits the server wrote
                    assert got.dtype == numpy.uint16
                    got = _arrays.bfloat16_values(got)
                compare(r.op, dtype, got, *expected(r.op, values, axis, True, 1),
                        f"{r.op} of {dtype} axis={axis} into a region from byte {start}")
            check_placement(region, result, start)
        # reduce answers the views themselves, as it answers arrays otherwise
        answers = client.reduce(sent, ops=ops, ddof=1, axis=axis, keepdims=True, out=region,
                                **named)
        assert all(numpy.shares_memory(a, region.array) for a in answers)


def test_reduce_many_into_a_region(client, rng):
    arrays = [make("float64", (n,), rng)[0] for n in (0, 1, 5, 1000, 3, 17)]
    ops = ["nansum", "var", "nanmax"]
    with output_region(client, 256) as region:
        nonempty = arrays[1:]  # nanmax of nothing is refused
        total, var, top = client.reduce_many(nonempty, ops=ops, ddof=1, out=region)
        want = client.reduce_many(nonempty, ops=ops, ddof=1)  # the same, through the response
        for i, answer in enumerate(want):
            for got, one in zip((total, var, top), answer):
                assert same(got[i], one), (i, got[i], one)
        assert total.shape == (5,) and total.dtype == numpy.float64
        check_placement(region, client.reduce_many_result(nonempty, ops=ops, out=region))
        sums = client.reduce_many(arrays, "sum", out=(region, 100))  # empty: the identity
        assert sums[0] == 0 and all(map(same, sums, client.reduce_many(arrays, "sum")))
        assert numpy.shares_memory(sums, region.array)


def test_a_payload_and_its_results_in_one_object(client, rng):
    """A region holding both: results after the payload are fine, over it refused."""
    sent, values = make("float32", (40, 25), rng, nan=False)
    segment = shared_memory.SharedMemory(create=True, size=sent.nbytes + 512)
    try:
        payload = numpy.ndarray(sent.shape, sent.dtype, buffer=segment.buf)
        payload[...] = sent
        with client.shared_memory(segment, writable=True) as region:
            result = client.reduce_shared(region.name, 0, sent.nbytes, ops=["mean", "argmin"],
                                          shape=sent.shape, axis=0, out=(region, sent.nbytes))
            mean, where = result.values
            compare("mean", "float32", mean, *expected("mean", values, 0, False, 0), "mean")
            assert numpy.array_equal(where, numpy.argmin(values, axis=0))
            assert result.results[0].output_offset == sent.nbytes
            with pytest.raises(gpureduce.Error) as error:
                client.reduce_shared(region.name, 0, sent.nbytes, "sum", shape=sent.shape,
                                     axis=0, out=(region, sent.nbytes - 8))
            assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT
            assert "overlaps the payload" in error.value.message, error.value
            assert numpy.array_equal(payload, sent)
        del payload, mean, where, result  # views of the caller's segment, which it closes
    finally:
        segment.close()
        segment.unlink()


def test_a_region_as_payload_and_another_for_results(client, rng):
    sent, values = make("int64", (64, 9), rng)
    with client.shared_memory(sent) as source, output_region(client, 64 * 8) as region:
        total = source.reduce("sum", axis=-1, out=region)
        assert numpy.array_equal(total, numpy.sum(values, axis=-1))
        assert numpy.shares_memory(total, region.array)
    # Views outlive the block: the mapping goes with the last of them.
    assert numpy.array_equal(total, numpy.sum(values, axis=-1))


def test_shape_empty_and_zero_length_results(client):
    x = numpy.arange(-6, 6, dtype=numpy.int32).reshape(3, 4)
    with output_region(client, 64) as region:
        everything = client.reduce(x, "sum", axis=(0, 1), out=region)
        assert everything.shape == () and everything.dtype == numpy.int64 and everything == -6
        assert numpy.shares_memory(everything, region.array)  # a 0-d view, not a scalar
        where = client.reduce_result(x, "argmax", axis=None, keepdims=True, out=region)
        assert where.scalar.shape == (1, 1) and where.scalar[0, 0] == 11
        nothing = client.reduce(numpy.zeros((0, 3), numpy.int32), "min", axis=1, out=region)
        assert nothing.shape == (0,) and nothing.dtype == numpy.int32


def test_the_servers_refusals(client, rng):
    sent, _ = make("float32", (100, 30), rng)
    with output_region(client, 1024, writable=False) as region:
        assert not region.writable and not region.region.writable
        with pytest.raises(gpureduce.Error) as error:
            client.reduce(sent, "sum", axis=1, out=region)
        assert error.value.code == grpc.StatusCode.FAILED_PRECONDITION, error.value
        assert "not registered writable" in error.value.message, error.value
        assert numpy.all(region_bytes(region) == MARKER)
    with output_region(client, 512) as region:  # 100 float32 results: 400 bytes an op
        for out, ops in ((region, ["sum", "max"]), ((region, 200), ["sum"])):
            with pytest.raises(gpureduce.Error) as error:
                client.reduce(sent, ops=ops, axis=1, out=out)
            assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT, error.value
            assert "spec.output.byte_size" in error.value.message, error.value
        assert numpy.all(region_bytes(region) == MARKER)
        with pytest.raises(gpureduce.Error) as error:
            client.reduce_shared("py-no-such-region", 0, 4, "sum", shape=(1,), axis=0,
                                 out=region)
        assert error.value.code == grpc.StatusCode.NOT_FOUND


def test_the_clients_refusals_before_sending(client, shm_server):
    x = numpy.ones((4, 8), numpy.float32)
    with output_region(client, 256) as region:
        with gpureduce.Client("127.0.0.1:1") as nowhere:  # nothing listens: never sent
            with pytest.raises(ValueError, match="out= takes the results of an array request"):
                nowhere.reduce(x, "sum", out=region)
            with pytest.raises(ValueError, match="array request"):
                nowhere.reduce_result(x, ops=["min", "max"], out=(region, 8))
            with pytest.raises(TypeError, match="dtype=float64 with out="):
                nowhere.reduce(x, "sum", axis=0, dtype=numpy.float64, out=region)
            with pytest.raises(TypeError, match="writable=True"):
                nowhere.reduce(x, "sum", axis=0, out=region.region)  # no mapping here
            with pytest.raises(TypeError, match="writable=True"):
                nowhere.reduce(x, "sum", axis=0, out=numpy.empty(8, numpy.float32))
            with pytest.raises(ValueError, match="outside region"):
                nowhere.reduce(x, "sum", axis=0, out=(region, 264))
        with pytest.raises(ValueError, match="array request"):
            region.reduce("sum", out=region)
        assert numpy.all(region_bytes(region) == MARKER)
    with pytest.raises(ValueError, match="not open"):
        client.reduce(x, "sum", axis=0, out=region)
    with gpureduce.Client(shm_server.target) as other:
        with pytest.raises(ValueError, match="cannot write a CUDA region"):
            gpureduce.SharedRegion(other, _FakeCuda(), writable=True).open()


class _FakeCuda:
    """A CUDA array by its interface alone: refused before the driver is asked anything."""

    __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0x7f0000000000, False),
                                "version": 3, "strides": None, "stream": None}
