"""A server's Unix socket (--listen-unix) from Python: a `unix:PATH` target reduces as the TCP one
does, and a plaintext client of a server on this host sends its shared-memory calls there itself
(every test of test_shared_memory.py goes that way), where the socket's server is the one it
asked; otherwise, and over TLS, the client keeps its own channel."""

import grpc
import numpy
import pytest

import gpureduce
from gpureduce import _local
from gpureduce.v1 import reduce_pb2
from test_client import mixed_sign  # pylint: disable=wrong-import-order


@pytest.mark.parametrize("size", [1, 2, 31, 1000003])
def test_a_unix_target_reduces_and_names_the_same_server(shm_server, rng, size):
    x = mixed_sign(size, rng)
    with gpureduce.Client("unix:" + shm_server.unix_socket) as local, \
            gpureduce.Client(shm_server.target) as remote:
        assert local.info().unix_socket == shm_server.unix_socket
        assert local.info().instance_id == remote.info().instance_id != ""
        total = local.reduce(x, "sum")  # float32, as NumPy's: one rounding of the exact sum
        exact = x.astype(numpy.float64).sum()
        assert abs(float(total) - exact) <= abs(exact) * 2.0**-24 + \
            1e-12 * numpy.abs(x.astype(numpy.float64)).sum()
        assert local.reduce(x, "argmin") == int(numpy.argmin(x))


def test_shared_memory_calls_go_over_the_socket(shm_server, rng):
    x = mixed_sign(100003, rng)
    with gpureduce.Client(shm_server.target) as client:
        assert client.shared_memory_target == "unix:" + shm_server.unix_socket
        with client.shared_memory(x) as region:
            assert region.reduce("max") == x.max()
            listed = {r.name: r.byte_size for r in client.list_shared_memory()}
            assert listed[region.name] == x.nbytes
        with gpureduce.Client("unix:" + shm_server.unix_socket) as local:
            assert local.shared_memory_target == "unix:" + shm_server.unix_socket


def test_a_server_without_a_socket_keeps_the_target(server):
    with gpureduce.Client(server.target) as client:
        assert client.info().unix_socket == ""
        assert client.shared_memory_target == server.target


class _Stub:
    """Answers GetServerInfo as a server at another place would, naming `unix_socket`."""

    def __init__(self, unix_socket, instance_id):
        self.info = reduce_pb2.ServerInfo(unix_socket=unix_socket, instance_id=instance_id)
        self.calls = 0

    def GetServerInfo(self, request, timeout=None, metadata=None):  # pylint: disable=invalid-name
        del request, timeout, metadata
        self.calls += 1
        return self.info


def test_a_socket_of_another_server_is_not_taken(shm_server):
    # The socket answers, but with shm_server's id, not the one the client's server gave.
    stub = _Stub(shm_server.unix_socket, "another-server")
    route = _local.LocalRoute("127.0.0.1:1", stub, [], [], secure=False)
    assert route.stub() is stub and route.target() == "127.0.0.1:1"
    assert stub.calls == 1, "resolved once, then fixed"


def test_tls_clients_and_missing_sockets_keep_their_channel(shm_server, workdir):
    stub = _Stub(shm_server.unix_socket, "any")
    assert _local.LocalRoute("127.0.0.1:1", stub, [], [], secure=True).stub() is stub
    assert stub.calls == 0, "a TLS client does not ask"
    missing = _Stub(workdir + "/no-such.sock", "any")
    assert _local.LocalRoute("127.0.0.1:1", missing, [], [], secure=False).stub() is missing


def test_an_unreachable_server_is_asked_again_next_time():
    class Down:
        calls = 0

        def GetServerInfo(self, request, timeout=None, metadata=None):  # pylint: disable=C0103
            del request, timeout, metadata
            Down.calls += 1
            raise grpc.RpcError()

    down = Down()
    route = _local.LocalRoute("127.0.0.1:1", down, [], [], secure=False)
    assert route.stub() is down and route.stub() is down
    assert Down.calls == 2


def test_the_callers_timeout_bounds_the_probe():
    class Timed(_Stub):
        timeouts = []

        def GetServerInfo(self, request, timeout=None, metadata=None):  # pylint: disable=C0103
            Timed.timeouts.append(timeout)
            return super().GetServerInfo(request, timeout, metadata)

    Timed.timeouts.clear()
    _local.LocalRoute("127.0.0.1:1", Timed("", "id"), [], [], secure=False).stub(timeout=0.25)
    _local.LocalRoute("127.0.0.1:1", Timed("", "id"), [], [], secure=False).stub()
    _local.LocalRoute("127.0.0.1:1", Timed("", "id"), [], [], secure=False).stub(timeout=60)
    assert Timed.timeouts == [0.25, _local._PROBE_SECONDS, _local._PROBE_SECONDS]  # pylint: disable=W0212


def test_a_socket_that_fails_unavailable_is_resolved_again(shm_server):
    with gpureduce.Client(shm_server.target) as client:
        instance_id = client.info().instance_id
    own = _Stub(shm_server.unix_socket, instance_id)
    route = _local.LocalRoute("127.0.0.1:1", own, [], [], secure=False)
    local = route.stub()
    assert local is not own and route.target() == "unix:" + shm_server.unix_socket
    route.unavailable(own)  # a failure of the client's own channel changes nothing
    route.unavailable(local)  # the socket's server answered UNAVAILABLE itself: still there
    assert route.stub() is local and own.calls == 1
    # The socket was replaced meanwhile (another identity): the route is resolved again.
    route._socket = (shm_server.unix_socket, ("another", "socket"))  # pylint: disable=W0212
    route.unavailable(local)
    assert route.target() == "unix:" + shm_server.unix_socket and own.calls == 2, \
        "asked again, and the socket's server is still the one asked"
    assert route.stub() is not local, "a new channel to the socket"
    route.close()
    assert route.stub() is not None
