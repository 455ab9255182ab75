"""Shared memory (issue 12) from Python against the real server started with
--allow-shared-memory: every op against the float64 reference through regions of awkward sizes
and at odd offsets, the context manager's cleanup, the lower-level calls, refusals, a server
without the flag; and CUDA arrays by IPC handle where the driver library and a GPU are present
(gpureduce._cuda.DeviceArray stands in for CuPy)."""

import os
import subprocess
import sys
import textwrap
from multiprocessing import shared_memory

import grpc
import numpy
import pytest

import gpureduce
from gpureduce import _cuda
import reference  # pylint: disable=wrong-import-order
from test_client import OPS, mixed_sign  # pylint: disable=wrong-import-order
from test_client import reference as float64_reference  # pylint: disable=wrong-import-order

SIZES = [1, 2, 31, 1000003]
CUDA_MISSING = _cuda.available()
BACKEND = os.environ.get("GPUREDUCE_TEST_BACKEND", "cpu")


@pytest.fixture
def rng():
    seed = int.from_bytes(os.urandom(8), "little")
    print(f"seed={seed}")
    return numpy.random.default_rng(seed)


def data(op, size, rng):
    if op == "prod":  # near 1, so a million factors stay finite
        return (rng.choice([-1.0, 1.0], size) * rng.uniform(0.999, 1.001, size)).astype(
            numpy.float32)
    return mixed_sign(size, rng)


def check(op, x, result):
    """`result` is the reduction `op` of float32 array `x`, within the float64 reference's
    tolerance (exact for min, max and the arg ops)."""
    expected, scale = float64_reference(op, x)
    assert result.count == x.size
    if op in ("argmin", "argmax"):
        assert result.index == int(expected)
        assert result.value == x[result.index]
    elif op in ("min", "max"):
        assert result.value == expected and result.index == -1
    else:
        assert abs(result.value - expected) <= 1e-9 * scale, (op, result.value, expected)


def shm_exists(key):
    return os.path.exists("/dev/shm" + key)


def test_server_info_tells_whether_shared_memory_is_on(server, shm_server):
    with gpureduce.Client(server.target) as client:
        assert client.info().shared_memory is False
    with gpureduce.Client(shm_server.target) as client:
        assert client.info().shared_memory is True


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("op", OPS)
def test_every_op_through_a_region(shm_server, rng, op, size):
    x = data(op, size, rng)
    with gpureduce.Client(shm_server.target) as client:
        with client.shared_memory(x) as region:
            assert region.kind == "system" and region.nbytes == x.nbytes
            assert region.register_us > 0
            result = region.reduce_result(op)
        check(op, x, result)
        assert result.timing["bytes"] == x.nbytes


@pytest.mark.parametrize("size", [5, 1000003])
def test_odd_offsets_within_a_larger_segment(shm_server, rng, size):
    """The floats start 52 bytes in (4-byte aligned, not 8, 16 or page aligned), and end 28
    bytes before the segment does: registered from there, or registered whole and referenced
    from there."""
    lead, tail = 13, 7
    segment = shared_memory.SharedMemory(create=True, size=4 * (lead + size + tail))
    floats = numpy.ndarray((lead + size + tail,), numpy.float32, buffer=segment.buf)
    try:
        floats[:] = numpy.float32(1e30)  # huge neighbours: reading one would show in every op
        with gpureduce.Client(shm_server.target) as client:
            for op in OPS:
                x = data(op, size, rng)
                floats[lead:lead + size] = x
                with client.shared_memory(segment, offset=4 * lead, byte_size=x.nbytes) as region:
                    assert region.region.offset == 4 * lead
                    assert region.region.byte_size == x.nbytes
                    numpy.testing.assert_array_equal(region.array, x)
                    check(op, x, region.reduce_result(op))
                whole = client.register_system_shared_memory("py-whole-segment",
                                                             "/" + segment.name)
                try:
                    assert whole.byte_size == segment.size
                    check(op, x, client.reduce_shared("py-whole-segment", 4 * lead, x.nbytes, op))
                finally:
                    assert client.unregister_shared_memory("py-whole-segment") == [
                        "py-whole-segment"]
            assert client.list_shared_memory() == []
        assert shm_exists("/" + segment.name), "the caller's segment is the caller's to unlink"
    finally:
        del floats  # the segment cannot be closed while a view of it lives
        segment.close()
        segment.unlink()


def test_the_server_reads_the_region_in_place(shm_server):
    """Writes to `region.array` are what the next reduction sees: nothing is sent again."""
    with gpureduce.Client(shm_server.target) as client:
        with client.shared_memory(numpy.zeros(100003, numpy.float32)) as region:
            assert region.reduce_result("sum").value == 0
            region.array[:] = 2
            region.array[70001] = 100
            assert region.reduce_result("sum").value == 2 * 100002 + 100
            assert region.reduce_result("argmax").index == 70001
            assert region.reduce_result("max", offset=4 * 70002).value == 2  # a part of it
            assert region.reduce_result("sum", offset=4, byte_size=8).value == 4


def test_leaving_the_block_unregisters_and_the_name_goes_once_the_server_mapped_it(shm_server,
                                                                                  rng):
    x = mixed_sign(4099, rng)
    with gpureduce.Client(shm_server.target) as client:
        with client.shared_memory(x) as region:
            listed = client.list_shared_memory()
            assert [r.name for r in listed] == [region.name]
            assert listed[0].kind == "system" and listed[0].key == region.key
            assert listed[0].byte_size == x.nbytes and listed[0].device_id == -1
            assert listed.total_bytes == x.nbytes and listed.max_regions >= 1
            # Mapped by the server: nothing is left in /dev/shm whatever becomes of this process.
            assert not shm_exists(region.key)
            exact = x.astype(numpy.float64)
            assert region.reduce_result("sum").value == pytest.approx(
                float(exact.sum()), abs=1e-9 * float(numpy.abs(exact).sum()))
        assert client.list_shared_memory() == []
        assert not shm_exists(region.key)
        with pytest.raises(ValueError, match="not open"):
            region.reduce_result("sum")

        with pytest.raises(ZeroDivisionError):  # the block's own exception comes through
            with client.shared_memory(x) as region:
                region.reduce_result("sum")
                print(1 / 0)
        assert client.list_shared_memory() == []
        assert not shm_exists(region.key)

        kept = None
        with client.shared_memory(x) as region:
            kept = region.array  # a view outliving the block: the segment is still unlinked
        assert not shm_exists(region.key) and kept[17] == x[17]


def test_an_empty_array(shm_server):
    with gpureduce.Client(shm_server.target) as client:
        with client.shared_memory(numpy.zeros(0, numpy.float32)) as region:
            assert region.nbytes == 0
            total = region.reduce_result("sum")
            assert total.value == 0 and total.count == 0
            assert region.reduce_result("prod").value == 1
            with pytest.raises(gpureduce.Error) as error:
                region.reduce_result("argmin")
            assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT


def test_the_lower_level_calls(shm_server, rng):
    x = mixed_sign(1000, rng)
    segment = shared_memory.SharedMemory(create=True, size=x.nbytes)
    try:
        numpy.ndarray(x.shape, numpy.float32, buffer=segment.buf)[:] = x
        with gpureduce.Client(shm_server.target) as client:
            a = client.register_system_shared_memory("py-a", "/" + segment.name)
            b = client.register_system_shared_memory("py-b", "/" + segment.name, offset=400,
                                                     byte_size=800)
            assert (a.kind, a.key, a.offset, a.byte_size) == ("system", "/" + segment.name, 0, 4000)
            assert (b.offset, b.byte_size) == (400, 800)
            assert sorted(r.name for r in client.list_shared_memory()) == ["py-a", "py-b"]
            check("sum", x, client.reduce_shared(a))  # a Region: its whole size
            check("min", x[100:300], client.reduce_shared(b, op="min"))
            check("argmax", x[150:300], client.reduce_shared("py-b", 200, 600, op="argmax"))
            assert client.unregister_shared_memory("py-a") == ["py-a"]
            with pytest.raises(gpureduce.Error) as error:
                client.reduce_shared("py-a", 0, 4000)
            assert error.value.code == grpc.StatusCode.NOT_FOUND
            assert client.unregister_shared_memory(all=True) == ["py-b"]
            assert client.list_shared_memory() == []
            with pytest.raises(ValueError, match="not both"):
                client.unregister_shared_memory()
            with pytest.raises(ValueError, match="not both"):
                client.unregister_shared_memory("py-a", all=True)
            with pytest.raises(ValueError, match="byte_size is needed"):
                client.reduce_shared("py-a")
    finally:
        segment.close()
        segment.unlink()


def test_refusals_are_precise(shm_server):
    segment = shared_memory.SharedMemory(create=True, size=4096)
    key = "/" + segment.name
    invalid, not_found = grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND
    try:
        with gpureduce.Client(shm_server.target) as client:
            def refused(code, call, *args, **kwargs):
                with pytest.raises(gpureduce.Error) as error:
                    call(*args, **kwargs)
                assert error.value.code == code, error.value
            register = client.register_system_shared_memory
            refused(invalid, register, "py-bad", key, 1, 8)          # offset not 2-byte aligned
            refused(invalid, register, "py-bad", key, 0, 7)          # size not 2-byte aligned
            refused(invalid, register, "py-bad", key, 0, 4100)       # past the object's end
            refused(invalid, register, "py-bad", "/../etc/passwd", 0, 4)  # not a shm name
            refused(invalid, register, "bad/name", key, 0, 4)        # not a region name
            refused(not_found, register, "py-bad", "/gpureduce-no-such-object", 0, 4)
            client.register_system_shared_memory("py-ok", key, 0, 4096)
            try:
                refused(invalid, client.reduce_shared, "py-ok", 2, 8)     # misaligned
                refused(invalid, client.reduce_shared, "py-ok", 4092, 8)  # past the region
                refused(not_found, client.reduce_shared, "py-none", 0, 8)
                refused(not_found, client.unregister_shared_memory, "py-none")
            finally:
                client.unregister_shared_memory("py-ok")
            assert client.list_shared_memory() == []
    finally:
        segment.close()
        segment.unlink()


def test_a_server_without_the_flag_refuses(server):
    with gpureduce.Client(server.target) as client:
        region = client.shared_memory(numpy.ones(1000, numpy.float32))
        with pytest.raises(gpureduce.Error) as error:
            with region:
                pytest.fail("registered on a server without --allow-shared-memory")
        assert error.value.code == grpc.StatusCode.PERMISSION_DENIED, error.value
        assert region.key and not shm_exists(region.key), "the segment made here is unlinked"
        for call, args in ((client.list_shared_memory, ()), (client.reduce_shared, ("x", 0, 4)),
                           (client.unregister_shared_memory, ("x",))):
            with pytest.raises(gpureduce.Error) as error:
                call(*args)
            assert error.value.code == grpc.StatusCode.PERMISSION_DENIED, (call, error.value)


class RefusingClient:
    """A client whose registrations fail with `code`: what does the region clean up?"""

    def __init__(self, code):
        self.code, self.unregistered = code, []

    def register_system_shared_memory(self, name, key, offset, byte_size, unlink_key=False,
                                      writable=False):
        # The segment is made here only to lend it: the server is asked to unlink it.
        assert os.path.exists("/dev/shm" + key) and byte_size == 40 and unlink_key
        assert not writable
        raise gpureduce.Error(self.code, "refused")

    def unregister_shared_memory(self, name):
        self.unregistered.append(name)
        raise gpureduce.Error(grpc.StatusCode.NOT_FOUND, "no such region")


@pytest.mark.parametrize("code,unregisters", [
    (grpc.StatusCode.PERMISSION_DENIED, False),
    (grpc.StatusCode.ALREADY_EXISTS, False),  # another client's region: not ours to remove
    (grpc.StatusCode.DEADLINE_EXCEEDED, True),  # the server may have registered it
    (grpc.StatusCode.UNAVAILABLE, True)])
def test_a_failed_registration_cleans_up(code, unregisters):
    client = RefusingClient(code)
    region = gpureduce.SharedRegion(client, numpy.ones(10, numpy.float32), name="py-refused")
    with pytest.raises(gpureduce.Error):
        with region:
            pass
    assert client.unregistered == (["py-refused"] if unregisters else [])
    assert region.key and not shm_exists(region.key)


# -- CUDA arrays -------------------------------------------------------------------------------


class FakeCudaArray:
    """Only the interface: for the checks made before the driver is asked anything."""

    def __init__(self, **interface):
        self.__cuda_array_interface__ = dict(
            {"shape": (4,), "typestr": "<f4", "data": (0x7f0000000000, False), "version": 3,
             "strides": None, "stream": None}, **interface)


def test_cuda_arrays_must_be_of_a_supported_dtype_and_contiguous():
    with gpureduce.Client("127.0.0.1:1") as client:  # never reached
        with pytest.raises(TypeError, match="int32 and int64 CUDA arrays, not '<c8'"):
            client.reduce_result(FakeCudaArray(typestr="<c8"))
        with pytest.raises(TypeError, match="CUDA arrays, not '<u2'.*bfloat16"):
            client.reduce_result(FakeCudaArray(typestr="<u2"))
        with pytest.raises(TypeError, match="input_dtype=.bfloat16. names the bits"):
            client.reduce_result(FakeCudaArray(typestr="<f4"), input_dtype="bfloat16")
        with pytest.raises(ValueError, match="C-contiguous"):
            client.reduce_result(FakeCudaArray(shape=(2, 2), strides=(16, 8)))
        with pytest.raises(ValueError, match="C-contiguous"):
            client.shared_memory(FakeCudaArray(shape=(4,), strides=(8,))).open()
    assert _cuda.array_view(FakeCudaArray(shape=(3, 1), strides=(4, 99))).count == 3
    for typestr, name in (("<f4", "float32"), ("<f2", "float16"), ("<f8", "float64"),
                          ("<i4", "int32"), ("<i8", "int64")):
        assert _cuda.array_dtype(FakeCudaArray(typestr=typestr)) == name
        view = _cuda.array_view(FakeCudaArray(typestr=typestr, shape=(3,),
                                              strides=(int(typestr[2]),)))
        assert view.nbytes == 3 * int(typestr[2])
    assert _cuda.array_dtype(FakeCudaArray(typestr="<u2"), "bfloat16") == "bfloat16"
    with pytest.raises(ValueError, match="C-contiguous"):
        _cuda.array_view(FakeCudaArray(typestr="<f8", shape=(3,), strides=(16,)))


@pytest.mark.skipif(CUDA_MISSING is None, reason="the CUDA driver is present here")
def test_without_a_cuda_driver_cuda_arrays_are_refused_clearly():
    with gpureduce.Client("127.0.0.1:1") as client:  # never reached
        with pytest.raises(gpureduce.CudaError, match="libcuda.so.1|cuInit|failed"):
            client.reduce_result(FakeCudaArray())


NO_CUDA = f"no CUDA here: {(CUDA_MISSING or '').split(';')[0]}"
needs_cuda = pytest.mark.skipif(CUDA_MISSING is not None, reason=NO_CUDA)
needs_cuda_server = pytest.mark.skipif(
    CUDA_MISSING is not None or BACKEND != "cuda",
    reason=NO_CUDA if CUDA_MISSING else
    "the server runs the CPU backend (GPUREDUCE_TEST_BACKEND=cuda runs these)")

_OPEN_IN_ANOTHER_PROCESS = textwrap.dedent("""
    import importlib.util, sys, ctypes, numpy
    spec = importlib.util.spec_from_file_location("gpureduce_cuda", sys.argv[1])
    cuda = sys.modules["gpureduce_cuda"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cuda)
    lib = cuda.driver()
    handle = cuda.IpcMemHandle.from_buffer_copy(bytes.fromhex(sys.argv[2]))
    device, offset, count = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    with cuda._Current(lib, None, device):
        base = cuda.CUdeviceptr()
        cuda._check(lib, lib.cuIpcOpenMemHandle_v2(ctypes.byref(base), handle, 1), "open")
        host = numpy.empty(count, numpy.float32)
        cuda._check(lib, lib.cuMemcpyDtoH_v2(host.ctypes.data, base.value + offset,
                                             host.nbytes), "copy")
        cuda._check(lib, lib.cuIpcCloseMemHandle(base.value), "close")
    sys.stdout.write(host.tobytes().hex())
""")


@needs_cuda
def test_a_cuda_export_opens_in_another_process(rng):
    """What registration sends (the allocation's IPC handle, the array's offset in it) names
    the array's bytes in another process: checked without the server."""
    x = mixed_sign(1000, rng)
    with _cuda.DeviceArray(13 + x.size + 7) as allocation:
        allocation.copy_from(x, start=13)
        exported = _cuda.export(allocation.view(13, x.size))
        assert (exported.offset, exported.nbytes) == (52, x.nbytes)
        assert exported.allocation_bytes >= 4 * (13 + x.size + 7)
        assert len(exported.handle) == 64
        numpy.testing.assert_array_equal(allocation.view(13, x.size).to_numpy(), x)
        child = subprocess.run(
            [sys.executable, "-c", _OPEN_IN_ANOTHER_PROCESS, _cuda.__file__,
             exported.handle.hex(), str(exported.device), str(exported.offset), str(x.size)],
            capture_output=True, text=True, timeout=120, check=False)
        assert child.returncode == 0, child.stderr
        numpy.testing.assert_array_equal(numpy.frombuffer(bytes.fromhex(child.stdout),
                                                          numpy.float32), x)


@needs_cuda
def test_the_cpu_backend_refuses_cuda_memory(shm_server):
    if BACKEND != "cpu":
        pytest.skip("the server runs the CUDA backend")
    with gpureduce.Client(shm_server.target) as client, \
            _cuda.DeviceArray.from_numpy(numpy.ones(10, numpy.float32)) as x:
        with pytest.raises(gpureduce.Error) as error:
            client.reduce_result(x)
        assert error.value.code == grpc.StatusCode.FAILED_PRECONDITION, error.value
        assert client.list_shared_memory() == []


@needs_cuda_server
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("op", OPS)
def test_every_op_on_a_cuda_array(shm_server, rng, op, size):
    x = data(op, size, rng)
    with gpureduce.Client(shm_server.target) as client, _cuda.DeviceArray.from_numpy(x) as d:
        result = client.reduce_result(d, op=op)
        check(op, x, result)
        assert result.backend == "cuda"
        assert client.list_shared_memory() == []


@needs_cuda_server
def test_a_cuda_array_at_an_odd_offset_in_its_allocation(shm_server, rng):
    size = 1000003
    with gpureduce.Client(shm_server.target) as client, \
            _cuda.DeviceArray(13 + size + 7) as allocation:
        allocation.copy_from(numpy.full(13 + size + 7, 1e30, numpy.float32))
        for op in OPS:
            x = data(op, size, rng)
            allocation.copy_from(x, start=13)
            with client.shared_memory(allocation.view(13, size)) as region:
                listed = client.list_shared_memory()
                assert [(r.name, r.kind, r.offset, r.byte_size) for r in listed] == [
                    (region.name, "cuda", 52, x.nbytes)]
                check(op, x, region.reduce_result(op))
                check(op, x, region.reduce_result(op))  # again, without registering again
        assert client.list_shared_memory() == []


# -- every dtype -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int32", "int64"])
@pytest.mark.parametrize("size", [31, 1000003])
def test_every_dtype_through_a_region(shm_server, dtype, size):
    """A region holds the array's own elements (31 float16s: 62 bytes in a 64-byte region)."""
    sent, values = reference.data(dtype, size)
    named = {"input_dtype": "bfloat16"} if dtype == "bfloat16" else {}
    with gpureduce.Client(shm_server.target) as client:
        with client.shared_memory(sent, **named) as region:
            assert region.dtype == dtype and region.nbytes == sent.nbytes
            assert region.array.dtype.itemsize == sent.dtype.itemsize
            numpy.testing.assert_array_equal(region.array.view(sent.dtype), sent)
            ops = [op for op in reference.OPS if "prod" not in op]
            for op, got in zip(ops, region.reduce(ops=ops, ddof=1)):
                reference.check(op, dtype, values, got, ddof=1, case="region")
            part = region.reduce_result("sum", offset=2 * sent.itemsize,
                                        byte_size=5 * sent.itemsize)
            reference.check("sum", dtype, values[2:7], part.scalar, case="part of a region")
            assert part.count == 5 and part.dtype == dtype
        assert client.list_shared_memory() == []


def test_an_existing_segment_of_float64(shm_server):
    x = numpy.arange(-7, 1000, dtype=numpy.float64) / 8
    segment = shared_memory.SharedMemory(create=True, size=x.nbytes + 8)
    try:
        numpy.ndarray(x.shape, x.dtype, buffer=segment.buf, offset=8)[:] = x
        with gpureduce.Client(shm_server.target) as client:
            with client.shared_memory(segment, offset=8, input_dtype="float64") as region:
                assert region.dtype == "float64" and region.nbytes == x.nbytes
                assert region.reduce("sum") == numpy.sum(x)
                assert region.reduce("argmin") == 0
            result = client.register_system_shared_memory("py-f64", "/" + segment.name)
            try:
                got = client.reduce_shared("py-f64", 8, x.nbytes, "max", input_dtype="float64")
                assert got.scalar == x.max() and type(got.scalar) is numpy.float64  # noqa
                assert result.byte_size == segment.size
                with pytest.raises(gpureduce.Error) as error:  # 12 bytes: not whole float64s
                    client.reduce_shared("py-f64", 8, 12, "sum", input_dtype="float64")
                assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT
            finally:
                client.unregister_shared_memory("py-f64")
    finally:
        segment.close()
        segment.unlink()


@pytest.mark.skipif(BACKEND == "cuda", reason="the faked export names no real allocation: the "
                    "CUDA server would try to open it (test_every_dtype_and_op_on_a_cuda_array "
                    "runs there)")
@pytest.mark.parametrize("typestr,input_dtype,dtype", [
    ("<f2", None, "float16"), ("<u2", "bfloat16", "bfloat16"), ("<i8", None, "int64")])
def test_cuda_arrays_of_every_dtype_are_registered_as_theirs(shm_server, monkeypatch, typestr,
                                                             input_dtype, dtype):
    """Without a GPU: the export is faked, the CPU backend refuses the registration; what the
    client asked for on the way is checked."""
    asked = {}
    itemsize = int(typestr[2])

    def export(obj):  # the array 2 bytes into its allocation: inside a 4-byte word
        view = _cuda.array_view(obj)
        return _cuda.Export(handle=bytes(64), device=0, offset=2, nbytes=view.nbytes,
                            allocation_bytes=2 + view.nbytes + 256)

    monkeypatch.setattr(_cuda, "export", export)
    with gpureduce.Client(shm_server.target) as client:
        register = client.register_cuda_shared_memory

        def registering(name, handle, device, offset, byte_size, **kwargs):
            asked.update(offset=offset, byte_size=byte_size)
            return register(name, handle, device, offset, byte_size, **kwargs)

        monkeypatch.setattr(client, "register_cuda_shared_memory", registering)
        array = FakeCudaArray(typestr=typestr, shape=(5, 3))
        region = client.shared_memory(array, input_dtype=input_dtype)
        assert region.kind == "cuda" and region.dtype == dtype
        with pytest.raises(gpureduce.Error) as error:
            client.reduce(array, "sum", input_dtype=input_dtype)
        assert error.value.code == grpc.StatusCode.FAILED_PRECONDITION, error.value
        # The region: whole words around the array's 15 elements from byte 2.
        assert asked == {"offset": 0, "byte_size": -(-(2 + 15 * itemsize) // 4) * 4}
        assert client.list_shared_memory() == []


@needs_cuda_server
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int32", "int64"])
@pytest.mark.parametrize("size", [1, 31, 1000003])
def test_every_dtype_and_op_on_a_cuda_array(shm_server, dtype, size):
    named = {"input_dtype": "bfloat16"} if dtype == "bfloat16" else {}
    with gpureduce.Client(shm_server.target) as client:
        for op in reference.OPS:
            sent, values = reference.data(dtype, size, "prod" if "prod" in op else "general")
            with _cuda.DeviceArray.from_numpy(sent) as d:
                result = client.reduce_result(d, op, ddof=1 if size > 1 else 0, **named)
            assert result.backend == "cuda"
            reference.check(op, dtype, values, result.scalar, ddof=1 if size > 1 else 0,
                            case="CUDA array")
        assert client.list_shared_memory() == []
