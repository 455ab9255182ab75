"""CUDA arrays by reference, through the NVIDIA driver library (libcuda.so.1) and ctypes: no CUDA
toolkit, CuPy or PyTorch needed.

`export(obj)` reads an object's `__cuda_array_interface__` (float32, float16, float64, int32,
int64, or 2-byte integers holding bfloat16 bits; C-contiguous), finds the allocation that holds it
and returns the allocation's CUDA IPC handle, the array's offset in it and the device ordinal:
what RegisterCudaSharedMemory takes. `DeviceArray` is a minimal device array (cuMemAlloc,
cuMemcpyHtoD) exposing that interface, so that the CUDA path can be used and tested where no array
library is installed.
"""

from __future__ import annotations

import ctypes
import dataclasses
import threading
from typing import Optional

import numpy


class CudaError(RuntimeError):
    """The CUDA driver is missing or refused a call; the message names the call and the error."""


CUresult = ctypes.c_int
CUdeviceptr = ctypes.c_uint64
CUcontext = ctypes.c_void_p
CUstream = ctypes.c_void_p


class IpcMemHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * 64)]  # CUipcMemHandle: 64 opaque bytes


# CUpointer_attribute (cuda.h)
_ATTR_CONTEXT = 1
_ATTR_MEMORY_TYPE = 2
_ATTR_IS_MANAGED = 8
_ATTR_DEVICE_ORDINAL = 9
_ATTR_IS_LEGACY_CUDA_IPC_CAPABLE = 10
_MEMORYTYPE_DEVICE = 2

_P = ctypes.POINTER
_SIGNATURES = {
    "cuInit": [ctypes.c_uint],
    "cuGetErrorName": [CUresult, _P(ctypes.c_char_p)],
    "cuGetErrorString": [CUresult, _P(ctypes.c_char_p)],
    "cuDeviceGetCount": [_P(ctypes.c_int)],
    "cuDeviceGet": [_P(ctypes.c_int), ctypes.c_int],
    "cuDevicePrimaryCtxRetain": [_P(CUcontext), ctypes.c_int],
    "cuDevicePrimaryCtxRelease_v2": [ctypes.c_int],
    "cuCtxPushCurrent_v2": [CUcontext],
    "cuCtxPopCurrent_v2": [_P(CUcontext)],
    "cuCtxSynchronize": [],
    "cuPointerGetAttribute": [ctypes.c_void_p, ctypes.c_int, CUdeviceptr],
    "cuMemGetAddressRange_v2": [_P(CUdeviceptr), _P(ctypes.c_size_t), CUdeviceptr],
    "cuIpcGetMemHandle": [_P(IpcMemHandle), CUdeviceptr],
    "cuIpcOpenMemHandle_v2": [_P(CUdeviceptr), IpcMemHandle, ctypes.c_uint],
    "cuIpcCloseMemHandle": [CUdeviceptr],
    "cuMemAlloc_v2": [_P(CUdeviceptr), ctypes.c_size_t],
    "cuMemFree_v2": [CUdeviceptr],
    "cuMemcpyHtoD_v2": [CUdeviceptr, ctypes.c_void_p, ctypes.c_size_t],
    "cuMemcpyDtoH_v2": [ctypes.c_void_p, CUdeviceptr, ctypes.c_size_t],
    "cuStreamSynchronize": [CUstream],
}

_lock = threading.Lock()
_driver = None


def driver():
    """The initialized driver library; CudaError (saying why) where there is none or no GPU."""
    global _driver  # pylint: disable=global-statement
    with _lock:
        if _driver is not None:
            return _driver
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as error:
            raise CudaError(
                "CUDA arrays need the NVIDIA driver library libcuda.so.1, which could not be "
                f"loaded ({error}); on a machine without a GPU, reduce NumPy arrays (or use "
                "client.shared_memory for system shared memory)") from None
        for name, argtypes in _SIGNATURES.items():
            function = getattr(lib, name)
            function.argtypes = argtypes
            function.restype = CUresult
        _check(lib, lib.cuInit(0), "cuInit")
        _driver = lib
        return lib


def available() -> Optional[str]:
    """None where the driver loads and sees a GPU; otherwise the reason it cannot be used."""
    try:
        lib = driver()
        count = ctypes.c_int()
        _check(lib, lib.cuDeviceGetCount(ctypes.byref(count)), "cuDeviceGetCount")
    except CudaError as error:
        return str(error)
    return None if count.value > 0 else "the CUDA driver sees no GPU"


def _check(lib, result: int, what: str) -> None:
    if result == 0:
        return
    name, text = ctypes.c_char_p(), ctypes.c_char_p()
    lib.cuGetErrorName(result, ctypes.byref(name))
    lib.cuGetErrorString(result, ctypes.byref(text))
    name = name.value.decode() if name.value else f"CUresult {result}"
    text = text.value.decode() if text.value else "unknown error"
    raise CudaError(f"{what} failed: {name} ({text})")


class _Current:
    """Makes `context` (or device `device`'s primary context) current on this thread for a
    block; the driver's calls on memory need one."""

    def __init__(self, lib, context: Optional[int] = None, device: int = 0):
        self._lib, self._context, self._device, self._retained = lib, context, device, False

    def __enter__(self):
        lib = self._lib
        if not self._context:
            context = CUcontext()
            _check(lib, lib.cuDevicePrimaryCtxRetain(ctypes.byref(context), self._device),
                   f"cuDevicePrimaryCtxRetain (device {self._device})")
            self._context, self._retained = context.value, True
        try:
            _check(lib, lib.cuCtxPushCurrent_v2(CUcontext(self._context)), "cuCtxPushCurrent")
        except CudaError:
            self._release()
            raise
        return self

    def __exit__(self, *exc):
        popped = CUcontext()
        self._lib.cuCtxPopCurrent_v2(ctypes.byref(popped))
        self._release()

    def _release(self):
        if self._retained:
            self._lib.cuDevicePrimaryCtxRelease_v2(self._device)
            self._retained = False


def _attribute(lib, attribute: int, pointer: int, ctype, what: str):
    value = ctype()
    _check(lib, lib.cuPointerGetAttribute(ctypes.byref(value), attribute, pointer), what)
    return value.value


@dataclasses.dataclass
class ArrayView:
    """What `__cuda_array_interface__` says of a C-contiguous array."""

    pointer: int
    count: int
    stream: Optional[int]  # the stream to synchronize with before others read it; None: none
    itemsize: int = 4

    @property
    def nbytes(self) -> int:
        return self.count * self.itemsize


def is_cuda_array(obj) -> bool:
    return not isinstance(obj, numpy.ndarray) and hasattr(obj, "__cuda_array_interface__")


# __cuda_array_interface__'s typestr (little-endian) -> the dtype gpureduce reads it as.
_TYPESTRS = {"f4": "float32", "f2": "float16", "f8": "float64", "i4": "int32", "i8": "int64"}


def array_dtype(obj, input_dtype: Optional[str] = None) -> str:
    """The gpureduce dtype of CUDA array `obj`: its typestr's, or "bfloat16" for 2-byte integers
    with `input_dtype="bfloat16"` (torch.bfloat16 tensors are passed as their int16 view). TypeError
    names the supported ones for any other."""
    typestr = obj.__cuda_array_interface__["typestr"]
    order, code = typestr[:1], typestr[1:]
    if order == ">" or (order == "=" and not numpy.little_endian):
        raise TypeError(f"gpureduce reads little-endian CUDA arrays, not {typestr!r}")
    if input_dtype == "bfloat16":
        if code not in ("u2", "i2"):
            raise TypeError("input_dtype=\"bfloat16\" names the bits of bfloat16 values: a "
                            f"uint16 or int16 CUDA array, not {typestr!r}")
        return "bfloat16"
    name = _TYPESTRS.get(code)
    if name is None:
        raise TypeError(f"gpureduce reduces float32, float16, bfloat16, float64, int32 and int64 "
                        f"CUDA arrays, not {typestr!r} (bfloat16: a uint16 view with "
                        "input_dtype=\"bfloat16\"); convert with array.astype(...) first")
    if input_dtype is not None and input_dtype != name:
        raise TypeError(f"input_dtype={input_dtype!r} does not match the CUDA array's {typestr!r}")
    return name


def array_view(obj) -> ArrayView:
    """The pointer, element count and stream of a C-contiguous CUDA array of 2-, 4- or 8-byte
    elements; ValueError for a strided or masked one."""
    interface = obj.__cuda_array_interface__
    itemsize = int(interface["typestr"][2:] or 0)
    if itemsize not in (2, 4, 8):
        raise TypeError(f"gpureduce cannot reduce CUDA arrays of {interface['typestr']!r}")
    if interface.get("mask") is not None:
        raise ValueError("gpureduce cannot reduce a masked CUDA array")
    shape = tuple(int(n) for n in interface["shape"])
    count = int(numpy.prod(shape, dtype=numpy.int64))
    strides = interface.get("strides")
    if strides is not None and count > 1:
        expected = itemsize
        for extent, stride in zip(reversed(shape), reversed(tuple(strides))):
            if extent != 1 and stride != expected:
                raise ValueError("gpureduce reads CUDA arrays in place, so they must be "
                                 "C-contiguous; make a contiguous copy first "
                                 f"(shape {shape}, strides {tuple(strides)})")
            expected *= extent
    pointer = int(interface["data"][0] or 0)
    stream = interface.get("stream") if int(interface.get("version", 0)) >= 3 else None
    return ArrayView(pointer=pointer, count=count, stream=stream, itemsize=itemsize)


@dataclasses.dataclass
class Export:
    """An array in a device allocation, as another process opens it."""

    handle: bytes         # the allocation's 64-byte CUDA IPC handle
    device: int           # its device ordinal in this process
    offset: int           # the array's first byte, from the allocation's start
    nbytes: int           # the array's bytes
    allocation_bytes: int


def export(obj) -> Export:
    """The IPC handle of the allocation that holds CUDA array `obj` and where the array is in it.
    Synchronizes the array's stream first (so another process reads the finished data)."""
    view = array_view(obj)
    if view.count == 0:
        raise ValueError("an empty CUDA array has no memory to share")
    lib = driver()
    pointer = view.pointer
    try:
        memory_type = _attribute(lib, _ATTR_MEMORY_TYPE, pointer, ctypes.c_uint,
                                 "cuPointerGetAttribute(MEMORY_TYPE)")
    except CudaError as error:
        raise CudaError(f"the CUDA array's pointer {pointer:#x} is not memory the CUDA driver "
                        f"knows in this process: {error}") from None
    managed = _attribute(lib, _ATTR_IS_MANAGED, pointer, ctypes.c_int,
                         "cuPointerGetAttribute(IS_MANAGED)")
    if memory_type != _MEMORYTYPE_DEVICE or managed:
        raise CudaError(f"the CUDA array at {pointer:#x} is not in device memory (managed or "
                        "host memory cannot be shared by CUDA IPC); copy it to a device array")
    device = _attribute(lib, _ATTR_DEVICE_ORDINAL, pointer, ctypes.c_int,
                        "cuPointerGetAttribute(DEVICE_ORDINAL)")
    context = _attribute(lib, _ATTR_CONTEXT, pointer, ctypes.c_void_p,
                         "cuPointerGetAttribute(CONTEXT)")
    with _Current(lib, context, device):
        base, size = CUdeviceptr(), ctypes.c_size_t()
        _check(lib, lib.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), pointer),
               "cuMemGetAddressRange")
        capable = ctypes.c_int(1)
        if lib.cuPointerGetAttribute(ctypes.byref(capable), _ATTR_IS_LEGACY_CUDA_IPC_CAPABLE,
                                     pointer) == 0 and not capable.value:
            raise CudaError(
                "the CUDA array's memory cannot be shared by CUDA IPC (it comes from a stream-"
                "ordered pool, cudaMallocAsync, or cuMemCreate); allocate it with cudaMalloc "
                "(for CuPy, the default memory pool)")
        handle = IpcMemHandle()
        _check(lib, lib.cuIpcGetMemHandle(ctypes.byref(handle), base.value), "cuIpcGetMemHandle")
        if view.stream is not None:
            _check(lib, lib.cuStreamSynchronize(CUstream(int(view.stream))),
                   "cuStreamSynchronize (the array's stream)")
    offset = pointer - base.value
    if offset < 0 or offset + view.nbytes > size.value:
        raise CudaError(f"the CUDA array ({view.nbytes} bytes at {pointer:#x}) is not within its "
                        f"allocation ({size.value} bytes at {base.value:#x})")
    return Export(handle=ctypes.string_at(ctypes.addressof(handle), 64), device=device,
                  offset=offset, nbytes=view.nbytes, allocation_bytes=size.value)


class DeviceArray:
    """An array in device memory (cuMemAlloc), with `__cuda_array_interface__`; float32 unless
    `dtype` names another NumPy dtype (a uint16 array holds bfloat16 bits).

        with DeviceArray.from_numpy(x) as d:
            client.reduce(d)

    `view(start, count)` is a part of it (sharing the allocation); `to_numpy()` copies it back.
    The memory is freed by `free()` (or on leaving a `with` block), not before its views'.
    """

    def __init__(self, count: int, device: int = 0, *, dtype=numpy.float32,
                 _owner: "DeviceArray" = None, _pointer: int = 0):
        self._lib = lib = driver()
        self.count, self.device = int(count), device
        self.dtype = numpy.dtype(dtype).newbyteorder("<")
        self._owner = _owner
        if _owner is not None:
            self.pointer, self._context = _pointer, _owner._context
            return
        self.pointer = 0
        # The device's primary context (the one the runtime API, CuPy and PyTorch use), held
        # until free(): its last release would destroy it, and the allocation with it.
        context = CUcontext()
        _check(lib, lib.cuDevicePrimaryCtxRetain(ctypes.byref(context), device),
               f"cuDevicePrimaryCtxRetain (device {device})")
        self._context = context.value
        nbytes = self.count * self.dtype.itemsize
        try:
            with _Current(lib, self._context):
                pointer = CUdeviceptr()
                _check(lib, lib.cuMemAlloc_v2(ctypes.byref(pointer), max(nbytes, 8)),
                       f"cuMemAlloc ({nbytes} bytes on device {device})")
        except CudaError:
            lib.cuDevicePrimaryCtxRelease_v2(device)
            raise
        self.pointer = pointer.value

    @classmethod
    def from_numpy(cls, array, device: int = 0, dtype=None) -> "DeviceArray":
        """A device copy of `array`, of its dtype (or `dtype`; a list: float32)."""
        if dtype is None:
            dtype = array.dtype if isinstance(array, numpy.ndarray) else numpy.float32
        host = numpy.ascontiguousarray(array, dtype=dtype).reshape(-1)
        result = cls(host.size, device, dtype=host.dtype)
        result.copy_from(host)
        return result

    def copy_from(self, array, start: int = 0) -> None:
        """Copies `array` (converted to this array's dtype) to elements [start, start + len) and
        waits for the copy."""
        host = numpy.ascontiguousarray(array, dtype=self.dtype).reshape(-1)
        if start < 0 or start + host.size > self.count:
            raise ValueError(f"{host.size} elements at {start} do not fit {self.count}")
        if host.size == 0:
            return
        with _Current(self._lib, self._context):
            _check(self._lib, self._lib.cuMemcpyHtoD_v2(
                self.pointer + self.dtype.itemsize * start, host.ctypes.data, host.nbytes),
                   "cuMemcpyHtoD")
            # A copy from pageable memory may return before its DMA is done: another process
            # must not read the memory before it is.
            _check(self._lib, self._lib.cuCtxSynchronize(), "cuCtxSynchronize")

    def to_numpy(self) -> numpy.ndarray:
        host = numpy.empty(self.count, self.dtype)
        if self.count:
            with _Current(self._lib, self._context):
                _check(self._lib, self._lib.cuMemcpyDtoH_v2(host.ctypes.data, self.pointer,
                                                            host.nbytes), "cuMemcpyDtoH")
        return host

    def view(self, start: int, count: int) -> "DeviceArray":
        if start < 0 or count < 0 or start + count > self.count:
            raise ValueError(f"[{start}, {start + count}) is not within {self.count} elements")
        return DeviceArray(count, self.device, dtype=self.dtype, _owner=self._owner or self,
                           _pointer=self.pointer + self.dtype.itemsize * start)

    @property
    def __cuda_array_interface__(self) -> dict:
        if not self.pointer:
            raise ValueError("the DeviceArray was freed")
        return {"shape": (self.count,), "typestr": self.dtype.str, "data": (self.pointer, False),
                "strides": None, "version": 3, "stream": None}

    def free(self) -> None:
        if self._owner is None and self.pointer:
            try:
                with _Current(self._lib, self._context):
                    _check(self._lib, self._lib.cuMemFree_v2(self.pointer), "cuMemFree")
            finally:
                self._lib.cuDevicePrimaryCtxRelease_v2(self.device)
        self.pointer = 0

    def __enter__(self) -> "DeviceArray":
        return self

    def __exit__(self, *exc) -> None:
        self.free()
