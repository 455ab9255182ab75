"""gpureduce.Client against the real server: the classic ops on float32 against a float64 NumPy
reference on fresh random inputs of mixed sign, at awkward sizes, unary and streamed, through
`reduce_result` (the whole answer, as `reduce` answered before dtypes); the NaN and
first-occurrence rules; precise errors; TLS and tokens; and the examples in docs/python.md.
Every dtype and op against NumPy: test_dtypes.py; shared memory: test_shared_memory.py."""

import os
import re

import grpc
import numpy
import pytest

import gpureduce

SIZES = [1, 2, 31, 4097, 1000003]
# The ops every server version ran on float32 (the float64 reference below knows these).
OPS = ["sum", "prod", "min", "max", "mean", "sum_squares", "argmin", "argmax"]


def mixed_sign(size, rng):
    # +/- m * 2^e, m in [1, 2), e in [-10, 10]: sums that cancel, magnitudes that differ.
    return (rng.choice([-1.0, 1.0], size) * rng.uniform(1, 2, size) *
            numpy.exp2(rng.integers(-10, 11, size))).astype(numpy.float32)


def reference(op, x):
    """The float64 answer and the scale its error is judged against (0: exact)."""
    wide = x.astype(numpy.float64)
    if op == "sum":
        return wide.sum(), numpy.abs(wide).sum()
    if op == "prod":
        return wide.prod(), abs(wide.prod())
    if op == "mean":
        return wide.mean(), numpy.abs(wide).mean()
    if op == "sum_squares":
        return (wide * wide).sum(), (wide * wide).sum()
    if op in ("min", "max"):
        return (wide.min() if op == "min" else wide.max()), 0.0
    return float(numpy.argmin(x) if op == "argmin" else numpy.argmax(x)), 0.0


@pytest.fixture
def rng():
    seed = int.from_bytes(os.urandom(8), "little")
    print(f"seed={seed}")
    return numpy.random.default_rng(seed)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("op", OPS)
def test_every_op_matches_a_float64_reference(server, rng, op, size):
    x = mixed_sign(size, rng)
    if op == "prod":  # near 1, so a million factors stay finite
        x = (rng.choice([-1.0, 1.0], size) * rng.uniform(0.999, 1.001, size)).astype(numpy.float32)
    with gpureduce.Client(server.target, chunk_bytes=256 << 10) as client:
        result = client.reduce_result(x, op=op)
    expected, scale = reference(op, x)
    assert result.count == size
    if op in ("argmin", "argmax"):
        assert result.index == int(expected)
        assert result.value == x[result.index]
    elif op in ("min", "max"):
        assert result.value == expected and result.index == -1
    else:
        assert abs(result.value - expected) <= 1e-9 * scale
    assert result.timing["chunks"] == (1 if size * 4 <= 256 << 10 else -(-size * 4 // (256 << 10)))


def test_nan_and_ties_follow_numpy(server, rng):
    x = mixed_sign(100003, rng)
    x[[70000, 90000]] = x.min() - 1  # a tie of minima: the first wins
    with gpureduce.Client(server.target, chunk_bytes=64 << 10) as client:
        assert client.reduce_result(x, op="argmin").index == 70000
        x[[50001, 80000]] = numpy.nan  # NaN propagates; argmax names the first NaN
        assert numpy.isnan(client.reduce_result(x, op="sum").value)
        assert client.reduce_result(x, op="argmax").index == 50001


def test_any_shape_is_reduced_flat(server, rng):
    x = mixed_sign(3 * 5 * 7, rng).reshape(3, 5, 7)
    with gpureduce.Client(server.target) as client:
        assert client.reduce_result(x[:, ::2, :], op="argmax").index == int(
            numpy.argmax(x[:, ::2, :]))


def test_errors_are_precise(server):
    with gpureduce.Client(server.target) as client:
        with pytest.raises(ValueError, match="unknown op 'median'"):
            client.reduce_result([1.0], op="median")
        with pytest.raises(TypeError, match="reduces float32, float16, bfloat16, float64, int32, "
                                            "int64 arrays, not uint8"):
            client.reduce_result(numpy.zeros(3, numpy.uint8), op="sum")
        with pytest.raises(gpureduce.Error) as error:
            client.reduce_result(numpy.ones(3, numpy.float32), kernel="no_such_kernel")
        assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert "unknown kernel" in error.value.message
        with pytest.raises(gpureduce.Error) as error:
            client.reduce_result(numpy.zeros(0, numpy.float32), op="argmin")
        assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert client.reduce_result(numpy.zeros(0, numpy.float32), op="prod").value == 1.0


def test_tls_and_tokens(workdir, certificates):
    from conftest import Server  # pylint: disable=import-outside-toplevel
    secure = {"tls_ca": certificates["ca.pem"], "token": "python-test-token"}
    server = Server(workdir, ["--tls-cert=" + certificates["server.pem"],
                              "--tls-key=" + certificates["server.key"],
                              "--auth-token-file=" + certificates["tokens"]], secure)
    try:
        x = numpy.arange(1, 5001, dtype=numpy.float32)
        with gpureduce.Client(server.target, **secure) as client:
            assert client.reduce_result(x).value == 5000 * 5001 / 2
        named = dict(secure, tls_server_name="localhost")
        with gpureduce.Client(server.target, **named) as client:
            assert client.reduce_result(x, op="max").value == 5000
        with gpureduce.Client(server.target, tls_ca=certificates["ca.pem"]) as client:
            with pytest.raises(gpureduce.Error) as error:
                client.reduce_result(x)
            assert error.value.code == grpc.StatusCode.UNAUTHENTICATED
        with gpureduce.Client(server.target, token="python-test-token") as client:
            with pytest.raises(gpureduce.Error) as error:  # plaintext against TLS
                client.reduce_result(x, timeout=10)
            assert error.value.code == grpc.StatusCode.UNAVAILABLE
    finally:
        server.stop()


def test_the_examples_in_docs_python_md_run(shm_server):
    # A server on this host that accepts shared memory: the doc's examples use it too.
    with open(os.environ["GPUREDUCE_PYTHON_DOC"], encoding="utf-8") as f:
        text = f.read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 2, "docs/python.md has lost an example"
    for block in blocks:
        exec(block.replace("127.0.0.1:50051", shm_server.target), {})  # pylint: disable=exec-used
