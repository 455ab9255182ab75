"""Several servers behind one target: calls go round robin over those that are up, and a server
that goes away leaves the rotation (the Python side of docs/scaling.md)."""

import numpy

import gpureduce
from conftest import Server


def test_calls_go_round_robin_and_survive_a_server_that_stops(workdir):
    servers = [Server(workdir) for _ in range(3)]
    try:
        target = "ipv4:" + ",".join(s.target for s in servers)
        rng = numpy.random.default_rng()
        data = rng.uniform(-1, 1, 100_003).astype(numpy.float32)
        expected = float(numpy.sum(data, dtype=numpy.float64))
        with gpureduce.Client(target) as client:
            for _ in range(9):
                total = client.reduce_result(data, op="sum").value
                scale = numpy.sum(numpy.abs(data, dtype=numpy.float64))
                assert abs(total - expected) <= 1e-9 * scale
            servers[1].stop()
            for _ in range(9):  # the stopped one is out of the rotation: nothing fails
                result = client.reduce_result(data, op="argmax")
                assert result.index == int(numpy.argmax(data))
    finally:
        for server in servers:
            if server.process.poll() is None:
                server.stop()
