"""Client.shared_memory: an array the server reads in place, registered for the life of a `with`
block (system shared memory for NumPy arrays, CUDA IPC for CUDA arrays)."""

from __future__ import annotations

import errno
import functools
import os
import secrets
import time
import warnings
from multiprocessing import resource_tracker
from multiprocessing import shared_memory as _shm
from typing import Optional

import grpc
import numpy

from gpureduce import _cuda, _dtypes


class _Segment(_shm.SharedMemory):
    """A segment this process created (and unlinks). `region.array` is a view that holds a
    buffer export of the mapping, so closing the segment under it fails (BufferError) rather
    than unmapping memory it reads; the mapping then goes with the last view, and the
    destructor closes only the descriptor (SharedMemory's would try to unmap again, noisily)."""

    def __del__(self):
        fd = getattr(self, "_fd", -1)
        if fd >= 0:
            os.close(fd)
            self._fd = -1


# Refusals after which the server surely holds no region of the name (ALREADY_EXISTS: another
# client's, which must not be unregistered). After any other failure of a registration (a
# deadline, a lost connection, an interrupt) it may hold one, and close() unregisters it.
_NOT_REGISTERED = frozenset({
    grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.OUT_OF_RANGE})


def unique_name() -> str:
    """A region name no other client picks: py-<pid>-<random>."""
    return f"py-{os.getpid()}-{secrets.token_hex(6)}"


def _reserve(segment: _shm.SharedMemory, size: int) -> None:
    """Allocates the segment's pages now: on a full /dev/shm, writing to a sparse segment would
    kill the process with SIGBUS, where this fails with ENOSPC."""
    fd = getattr(segment, "_fd", -1)
    if fd < 0 or not hasattr(os, "posix_fallocate"):
        return
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as error:
        if error.errno in (errno.ENOSPC, errno.EFBIG):
            raise OSError(error.errno, f"no room for {size} bytes of shared memory in /dev/shm "
                          f"({os.strerror(error.errno)}); a container's /dev/shm is 64 MiB "
                          "unless it is started with a larger --shm-size") from None
        # EINVAL, EOPNOTSUPP: a file system without fallocate; the copy will tell.


def _unlink(segment: _shm.SharedMemory) -> None:
    """Removes a segment's name from /dev/shm (the mappings stay) and the resource tracker's
    note of it."""
    try:
        segment.unlink()
    except FileNotFoundError:
        # Unlinked by someone else: then the resource tracker must not try again at exit.
        # pylint: disable-next=protected-access
        resource_tracker.unregister(segment._name, "shared_memory")


def _discard(segment: _shm.SharedMemory, linked: bool) -> None:
    """Unmaps (unless views of it live on) and, if its name is still `linked`, unlinks a segment
    this process created."""
    try:
        segment.close()
    except BufferError:
        pass  # a view of it lives on (the caller kept `region.array`): the mapping goes with it
    if linked:
        _unlink(segment)


class SharedRegion:
    """An array registered with the server as a shared-memory region, for `Client.shared_memory`.

    Inside the `with` block, `reduce(op, ...)` reduces it in place (no payload crosses the
    connection) and answers as `Client.reduce` does (`reduce_result`: the whole Result);
    `dtype` names its elements' type, `name` is the region's name in the server, `nbytes` the
    array's bytes, `register_us` what registration cost the server (in
    microseconds), `copy_us` what copying the array into shared memory cost here (0 where nothing
    was copied), `kind` "system" or "cuda", `key` the POSIX shared-memory object's name ("/...";
    "" for CUDA), `writable` whether it was registered for the server to write results into
    (`out=`), `region` the server's description (a Region). For system memory, `array` is a
    NumPy view of the region: writing to it changes what the next `reduce` sees. On leaving the
    block the region is unregistered (also when the block raised) and a segment made
    here is closed; its name leaves /dev/shm as soon as the server has mapped it, so that even a
    process killed outright leaves nothing there. A registration that failed without a clear
    answer (a deadline, a lost connection) is unregistered too, in case the server made it.
    """

    def __init__(self, client, source, *, offset: int = 0, byte_size: Optional[int] = None,
                 name: Optional[str] = None, device_id: Optional[int] = None,
                 input_dtype: Optional[str] = None, writable: bool = False):
        self._client = client
        # The array's shape, which axis= refers to (a SharedMemory's elements: 1-D)
        self.shape: Optional[tuple] = None
        if isinstance(source, _shm.SharedMemory):
            self.dtype = _dtypes.input_type(input_dtype) or "float32"
            cuda = False
        else:
            data = _dtypes.payload(source, input_dtype)  # TypeError for an unsupported dtype
            source, self.dtype, cuda, self.shape = data.array, data.dtype, data.cuda, data.shape
        self._source = source
        self._offset = int(offset)
        self._byte_size = byte_size
        self._device_id = device_id
        self.name = name or unique_name()
        self.key = ""
        self.kind = "cuda" if cuda else "system"
        self.writable = bool(writable)
        self.nbytes = 0
        self.register_us = 0.0
        self.copy_us = 0.0
        self.region = None     # the server's description (gpureduce.Region) once registered
        self._segment = None   # the SharedMemory read: ours (created) or the caller's
        self._owned = False    # whether this object created the segment (and unlinks it)
        self._linked = False   # a segment made here still has its name in /dev/shm
        self._array = None
        self._maybe_registered = False  # a registration was sent and may have happened
        self._region_offset = 0  # where the region starts in the segment
        self._array_offset = 0   # where the array starts in the region
        self._state = "new"    # new, open, closed

    # -- the block ------------------------------------------------------------------------------

    def __enter__(self) -> "SharedRegion":
        self.open()
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        # An exception from the block wins over a failure to unregister.
        self.close(quiet=exc_type is not None)

    def open(self) -> "SharedRegion":
        """Copies (where needed) and registers; `with` calls it."""
        if self._state != "new":
            raise ValueError(f"shared-memory region {self.name} was already opened")
        self._state = "open"
        try:
            if self.kind == "cuda":
                self._open_cuda()
            elif isinstance(self._source, _shm.SharedMemory):
                self._open_existing(self._source)
            else:
                self._open_copy()
        except BaseException:
            self.close(quiet=True)
            raise
        return self

    def close(self, quiet: bool = False) -> None:
        """Unregisters the region and releases a segment made here; safe to call twice. Raises
        the server's refusal to unregister unless `quiet` (a region already gone is no error)."""
        if self._state == "closed":
            return
        self._state = "closed"
        try:
            if self._maybe_registered:
                quiet = quiet or self.region is None  # no region known: a best effort
                self.region, self._maybe_registered = None, False
                try:
                    self._client.unregister_shared_memory(self.name)
                except Exception as error:  # pylint: disable=broad-except
                    code = getattr(error, "code", None)
                    if code != grpc.StatusCode.NOT_FOUND and not quiet:
                        raise
                    if code != grpc.StatusCode.NOT_FOUND:
                        warnings.warn(f"gpureduce: could not unregister shared-memory region "
                                      f"{self.name}: {error}", RuntimeWarning, stacklevel=3)
        finally:
            self._array = self._source = None
            if self._owned and self._segment is not None:
                _discard(self._segment, self._linked)
            self._segment = None

    # -- use ------------------------------------------------------------------------------------

    def reduce(self, op: Optional[str] = None, ddof: float = 0, dtype=None, *, ops=None,
               kernel: str = "auto", offset: int = 0, byte_size: Optional[int] = None,
               timeout: Optional[float] = None, axis=None, keepdims: bool = False, out=None):
        """Reduces the region (or `byte_size` bytes of it from `offset`) in place on the server;
        answers as `Client.reduce` does (a NumPy scalar, or a tuple of them for `ops`; arrays
        for `axis` and `keepdims`, of the array's shape where the region is a whole array,
        else of the elements as a 1-D array; with `out`, views of the region they went into)."""
        result = self.reduce_result(op, ddof, dtype, ops=ops, kernel=kernel, offset=offset,
                                    byte_size=byte_size, timeout=timeout, axis=axis,
                                    keepdims=keepdims, out=out, _stacklevel=3)
        return result.scalar if ops is None else result.values

    def reduce_result(self, op: Optional[str] = None, ddof: float = 0, dtype=None, *, ops=None,
                      kernel: str = "auto", offset: int = 0, byte_size: Optional[int] = None,
                      timeout: Optional[float] = None, axis=None, keepdims: bool = False,
                      out=None, _stacklevel: int = 2):
        """`reduce`, answered in full: a gpureduce.Result with the timing."""
        if self._state != "open":
            raise ValueError(f"shared-memory region {self.name} is not open (use it inside its "
                             "`with` block)")
        whole = offset == 0 and byte_size in (None, self.nbytes)
        if byte_size is None:
            byte_size = self.nbytes - offset
        return self._client.reduce_shared(self.name, self._array_offset + offset, byte_size, op,
                                          kernel, ops=ops,
                                          ddof=ddof, dtype=dtype, input_dtype=self.dtype,
                                          timeout=timeout, shape=self.shape if whole else None,
                                          axis=axis, keepdims=keepdims, out=out,
                                          _stacklevel=_stacklevel + 1)

    @property
    def array(self):
        """The registered elements: a NumPy view of system memory (bfloat16: their uint16 bits),
        the CUDA array itself."""
        if self._state != "open":
            raise ValueError(f"shared-memory region {self.name} is not open")
        if self.kind == "cuda":
            return self._source
        if self._array is None:
            # frombuffer, not ndarray(buffer=): its view holds a buffer export, which keeps
            # the segment from being unmapped under it (ndarray's would read unmapped memory).
            wire = _dtypes.DTYPES[self.dtype]
            self._array = numpy.frombuffer(self._segment.buf, wire[2],
                                           count=self.nbytes // wire[1],
                                           offset=self._region_offset)
        return self._array

    def _view(self, offset: int, dtype, count: int) -> numpy.ndarray:
        """`count` elements of `dtype` from byte `offset` of the region: a view of this process's
        mapping, where the server wrote results (`out=`). Like `array`, it holds a buffer export,
        so the mapping outlives the block while the view lives."""
        if self._state != "open" or self.kind != "system":
            raise ValueError(f"shared-memory region {self.name} is not an open system region")
        return numpy.frombuffer(self._segment.buf, dtype, count=count,
                                offset=self._region_offset + offset)

    def __repr__(self) -> str:
        return (f"<gpureduce.SharedRegion {self.name} {self.kind} {self.nbytes} bytes "
                f"{self._state}>")

    # -- the three sources ----------------------------------------------------------------------

    def _open_copy(self) -> None:
        if self._offset or self._byte_size is not None:
            raise ValueError("offset and byte_size select part of an existing SharedMemory; "
                             "for an array, slice it instead")
        flat = self._source
        self._source = None
        self.nbytes = flat.nbytes
        # A segment cannot be empty, and a region is a whole number of 4-byte words: the region
        # may be up to 3 bytes longer than the array (float16 arrays), the requests read nbytes.
        size = max(-(-flat.nbytes // 4) * 4, 4)
        self._segment = _Segment(create=True, size=size)
        self._owned = self._linked = True
        _reserve(self._segment, size)
        self._region_offset = 0
        # Registered first: once the server has it mapped, its name can leave /dev/shm.
        self._register_system(size)
        _unlink(self._segment)
        self._linked = False
        start = time.perf_counter()
        view = numpy.ndarray(flat.shape, flat.dtype, buffer=self._segment.buf)
        view[...] = flat
        del view  # no view of the mapping but `array` outlives this
        self.copy_us = (time.perf_counter() - start) * 1e6

    def _open_existing(self, segment: _shm.SharedMemory) -> None:
        self._segment = segment
        if self._byte_size is None:
            itemsize = _dtypes.DTYPES[self.dtype][1]
            self._byte_size = max(segment.size - self._offset, 0) // itemsize * itemsize
        self.nbytes = int(self._byte_size)
        self._region_offset = self._offset
        self._register_system(self.nbytes)

    def _register_system(self, byte_size: int) -> None:
        self.key = "/" + self._segment.name
        # A segment made here is only lent: the server removes its name once it has mapped it.
        self._register(functools.partial(self._client.register_system_shared_memory,
                                         unlink_key=self._owned, writable=self.writable),
                       self.key, self._region_offset, byte_size)

    def _register(self, call, *args) -> None:
        self._maybe_registered = True
        try:
            self.region = call(self.name, *args)
        except Exception as error:
            if getattr(error, "code", None) in _NOT_REGISTERED or isinstance(error, ValueError):
                self._maybe_registered = False
            raise
        self.register_us = self.region.register_us

    def _open_cuda(self) -> None:
        if self._offset or self._byte_size is not None:
            raise ValueError("offset and byte_size apply to a SharedMemory; for a CUDA array, "
                             "slice it instead")
        if self.writable:
            raise ValueError("writable=True lends system memory for results (out=); the server "
                             "cannot write a CUDA region")
        exported = _cuda.export(self._source)
        self.nbytes = exported.nbytes
        device = exported.device if self._device_id is None else self._device_id
        # A region is whole 4-byte words: a float16 array may start or end inside one (an odd
        # element count or offset); the region then takes in the rest of the word, within the
        # allocation, and the requests name the array's bytes in it.
        start = exported.offset // 4 * 4
        end = min(-(-(exported.offset + exported.nbytes) // 4) * 4, exported.allocation_bytes)
        self._array_offset = exported.offset - start
        self._register(self._client.register_cuda_shared_memory, exported.handle, device,
                       start, end - start)
