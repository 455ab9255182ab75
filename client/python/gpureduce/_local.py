"""The route of a client's shared-memory calls: the server's Unix socket (`--listen-unix`) where
this process reaches it and the server there is the one the client asked (the same `instance_id`
in GetServerInfo), else the client's own channel. Those calls name memory on the server's host,
so the client is on that host anyway, and the socket spares each call the TCP stack."""

from __future__ import annotations

import os
import stat
import threading

import grpc

from gpureduce.v1 import reduce_pb2, reduce_pb2_grpc

# How long either GetServerInfo of the probe may take before the client keeps its own channel.
_PROBE_SECONDS = 5.0


class LocalRoute:
    """Resolved on the first shared-memory call, then fixed: a plaintext client whose target is
    not a Unix socket already may move to the server's; a TLS client keeps its channel."""

    def __init__(self, target: str, stub, metadata, options, secure: bool):
        self._target = target
        self._stub = stub
        self._metadata = metadata
        self._options = options
        self._fixed = secure or target.startswith(("unix:", "unix-abstract:"))
        self._lock = threading.Lock()
        self._channel = None

    def stub(self):
        """The stub shared-memory calls go through."""
        with self._lock:
            if not self._fixed:
                self._resolve()
            return self._stub

    def target(self) -> str:
        """Where shared-memory calls go: the client's target or "unix:" and the socket's path."""
        self.stub()
        return self._target

    def close(self) -> None:
        if self._channel is not None:
            self._channel.close()

    def _resolve(self) -> None:
        request = reduce_pb2.GetServerInfoRequest()
        try:
            info = self._stub.GetServerInfo(request, timeout=_PROBE_SECONDS,
                                            metadata=self._metadata)
        except grpc.RpcError:
            return  # unresolved: the call itself says what is wrong, and the next one asks again
        self._fixed = True
        path = info.unix_socket
        try:
            if not path or not info.instance_id or not stat.S_ISSOCK(os.stat(path).st_mode):
                return
        except OSError:
            return  # not on this host, or not visible from this process (another container)
        channel = grpc.insecure_channel("unix:" + path, options=self._options)
        stub = reduce_pb2_grpc.ReducerStub(channel)
        try:
            there = stub.GetServerInfo(request, timeout=_PROBE_SECONDS, metadata=self._metadata)
        except grpc.RpcError:
            there = None  # not ours to connect to (the socket file's permissions), or gone
        if there is None or there.instance_id != info.instance_id:
            channel.close()
            return
        self._channel, self._stub, self._target = channel, stub, "unix:" + path
