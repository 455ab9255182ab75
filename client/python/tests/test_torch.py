"""PyTorch tensors against the real server (Debian's python3-torch, on the CPU): bfloat16 and
every other supported dtype read without a copy, answered as NumPy answers for the same values;
CUDA tensors go by CUDA IPC (test_shared_memory's CUDA tests cover the path)."""

import numpy
import pytest

import gpureduce
from reference import DTYPES, MOMENTS, OPS, bfloat16_bits, check, data

torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: apt install "
                                            "python3-torch)")

TORCH = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
         "float64": torch.float64, "int32": torch.int32, "int64": torch.int64}


@pytest.fixture(scope="module")
def client(server):
    with gpureduce.Client(server.target) as opened:
        yield opened


def tensor(dtype, size, kind="general"):
    """The matrix's data as a tensor, and the NumPy values it holds."""
    sent, values = data(dtype, size, kind)
    if dtype == "bfloat16":
        return torch.from_numpy(sent.view(numpy.int16)).view(torch.bfloat16), values
    return torch.from_numpy(sent), values


@pytest.mark.parametrize("size", [1, 31, 1000003])
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_op_of_every_tensor_dtype(client, dtype, size):
    for op in OPS:
        t, values = tensor(dtype, size, "prod" if "prod" in op else "general")
        assert t.dtype == TORCH[dtype]
        ddof = 1 if op in MOMENTS and size > 1 else 0
        check(op, dtype, values, client.reduce(t, op, ddof=ddof), ddof=ddof, case="torch")


def test_bfloat16_tensors_agree_with_torch(client):
    t = torch.linspace(-3, 5, 100003).to(torch.bfloat16)
    values = t.float().numpy()
    assert numpy.array_equal(bfloat16_bits(values), t.view(torch.int16).numpy().view(numpy.uint16))
    assert client.reduce(t, "max") == t.max().float().item()
    assert client.reduce(t, "argmin") == int(t.argmin())
    total = client.reduce(t, "sum")
    assert type(total) is numpy.float32  # pylint: disable=C0123
    # torch.sum accumulates in float32 and rounds once: the exact sum, rounded, is the same here
    assert total == torch.sum(t).float().item()
    answers = client.reduce(t, ops=["mean", "std"], ddof=1)
    for op, got in zip(["mean", "std"], answers):
        check(op, "bfloat16", values, got, ddof=1, case="torch linspace")


def test_tensors_that_are_views_or_need_grad(client):
    base = torch.arange(60, dtype=torch.float32).reshape(6, 10)
    view = base[:, ::3]  # not contiguous: made contiguous once
    assert client.reduce(view, "sum") == view.sum().item()
    assert client.reduce(base.T, "argmax") == numpy.argmax(base.T.numpy())
    grad = torch.ones(7, dtype=torch.float64, requires_grad=True)
    assert client.reduce(grad, "sum") == 7.0
    half = torch.arange(-5, 6, dtype=torch.bfloat16)[::2]
    assert client.reduce(half, "min") == -5 and client.reduce(half, "argmax") == 5


def test_other_tensor_dtypes_are_refused():
    with gpureduce.Client("127.0.0.1:1") as client:
        for dtype in (torch.uint8, torch.int16, torch.bool, torch.complex64):
            with pytest.raises(TypeError, match="float32, float16, bfloat16, float64, int32"):
                client.reduce(torch.zeros(3, dtype=dtype), "sum")
        with pytest.raises(TypeError, match="does not match the tensor's torch.float32"):
            client.reduce(torch.zeros(3), "sum", input_dtype="float16")
