"""The route of a client's shared-memory calls: the server's Unix socket (`--listen-unix`) where
this process reaches it and the server there is the one the client asked (the same `instance_id`
in GetServerInfo), else the client's own channel. Those calls name memory on the server's host,
so the client is on that host anyway, and the socket spares each call the TCP stack."""

from __future__ import annotations

import os
import socket
import stat
import threading
from typing import Optional

import grpc

from gpureduce.v1 import reduce_pb2, reduce_pb2_grpc

# How long either GetServerInfo of the probe may take before the client keeps its own channel.
_PROBE_SECONDS = 5.0


def _socket_identity(path: str):
    """The socket file's inode and change time, or None where there is none."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_dev, status.st_ino, status.st_ctime_ns) if stat.S_ISSOCK(
        status.st_mode) else None


def _accepts(path: str) -> bool:
    """Whether a process accepts connections on the socket at `path` (refused: a stale one)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(1.0)
        probe.connect(path)
        return True
    except OSError:
        return False
    finally:
        probe.close()


class LocalRoute:
    """Resolved on the first shared-memory call, then fixed until a call fails UNAVAILABLE over
    a socket that went (the next call resolves again): a plaintext client whose target is not a
    Unix socket already may move to the server's; a TLS client keeps its channel."""

    def __init__(self, target: str, stub, metadata, options, secure: bool):
        self._own = (target, stub)
        self._target = target
        self._stub = stub
        self._metadata = metadata
        self._options = options
        self._fixed = secure or target.startswith(("unix:", "unix-abstract:"))
        self._lock = threading.Lock()
        self._channel = None
        self._socket = ("", None)  # the socket's path and identity, once routed there
        self._closed = False

    def stub(self, timeout: Optional[float] = None):
        """The stub shared-memory calls go through; resolving it takes at most `timeout` (or
        _PROBE_SECONDS) per probe, outside the lock, so other calls do not wait behind it."""
        with self._lock:
            if self._fixed or self._closed:
                return self._stub
        found = self._resolve(_PROBE_SECONDS if timeout is None else min(timeout, _PROBE_SECONDS))
        with self._lock:
            if not self._fixed and not self._closed and found is not None:
                self._fixed = True
                if found != "own":
                    self._channel, self._stub, self._target = found
                    path = self._target[len("unix:"):]
                    self._socket = (path, _socket_identity(path))
                    found = None
            if isinstance(found, tuple):
                found[0].close()  # another call resolved first, or the client closed
            return self._stub

    def target(self) -> str:
        """Where shared-memory calls go: the client's target or "unix:" and the socket's path."""
        self.stub()
        with self._lock:
            return self._target

    def unavailable(self, stub) -> None:
        """A call through `stub` failed UNAVAILABLE. If that was the socket and the socket is
        gone, replaced or refusing connections (its server went), the next call resolves the
        route again; a server that answers UNAVAILABLE itself (not ready, its GPUs lost) keeps
        it. The old channel is dropped, not closed: calls still on it end as they would."""
        with self._lock:
            if stub is not self._stub or self._channel is None:
                return
            path, identity = self._socket
        if _socket_identity(path) == identity and _accepts(path):
            return
        with self._lock:
            if stub is self._stub:
                self._channel = None
                self._target, self._stub = self._own
                self._fixed = False

    def close(self) -> None:
        with self._lock:
            channel, self._channel, self._closed = self._channel, None, True
        if channel is not None:
            channel.close()

    def _resolve(self, seconds: float):
        """None: unresolved (the probe failed; the call itself says what is wrong, and the next
        one asks again); "own": the client's channel; else (channel, stub, target) of the
        socket."""
        request = reduce_pb2.GetServerInfoRequest()
        try:
            info = self._own[1].GetServerInfo(request, timeout=seconds, metadata=self._metadata)
        except grpc.RpcError:
            return None
        path = info.unix_socket
        try:
            if not path or not info.instance_id or not stat.S_ISSOCK(os.stat(path).st_mode):
                return "own"
        except OSError:
            return "own"  # not on this host, or not visible from this process (another container)
        channel = grpc.insecure_channel("unix:" + path, options=self._options)
        stub = reduce_pb2_grpc.ReducerStub(channel)
        try:
            there = stub.GetServerInfo(request, timeout=seconds, metadata=self._metadata)
        except grpc.RpcError:
            there = None  # not ours to connect to (the socket file's permissions), or gone
        if there is None or there.instance_id != info.instance_id:
            channel.close()
            return "own"
        return channel, stub, "unix:" + path
