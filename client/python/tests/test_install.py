"""`pip install client/python` offline, as docs/python.md says: into a fresh virtual environment
that sees Debian's grpcio, protobuf and NumPy, from a copy of the repository's client/python and
proto/ (a fresh clone's layout), with --no-build-isolation --no-index; the installed package
imports from the environment, has its generated stubs and type marker, and reduces."""

import os
import shutil
import subprocess
import sys

import pytest

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # client/python
REPOSITORY = os.path.dirname(os.path.dirname(SOURCE))
# The interpreter the environment is made from: the one beneath this one's environment, if any.
BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)


def test_the_running_package_is_the_installed_one():
    """Under run.sh (CTest) the suite runs on the installed package, not on the sources."""
    installed = os.environ.get("GPUREDUCE_TEST_INSTALLED")
    if not installed:
        pytest.skip("not run by run.sh: GPUREDUCE_TEST_INSTALLED names no environment")
    import gpureduce  # pylint: disable=import-outside-toplevel
    assert os.path.realpath(gpureduce.__file__).startswith(os.path.realpath(installed))


@pytest.mark.parametrize("compiler", ["protoc", "grpc_tools"])
def test_pip_installs_the_package_offline(tmp_path, server, compiler):
    if compiler == "protoc" and not (shutil.which("protoc") and shutil.which("grpc_python_plugin")):
        pytest.skip("no protoc and grpc_python_plugin (protobuf-compiler, protobuf-compiler-grpc)")
    if compiler == "grpc_tools" and subprocess.run(
            [BASE_PYTHON, "-c", "import grpc_tools.protoc"], check=False).returncode:
        pytest.skip("no grpc_tools (python3-grpc-tools)")
    clone = tmp_path / "clone"
    shutil.copytree(SOURCE, clone / "client" / "python",
                    ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__"))
    shutil.copytree(os.path.join(REPOSITORY, "proto"), clone / "proto")
    venv = tmp_path / "venv"
    # --without-pip: Debian's pip (python3-pip) is seen through the system site packages.
    subprocess.run([BASE_PYTHON, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True)
    python = str(venv / "bin" / "python")
    env = dict(os.environ, GPUREDUCE_PROTOC=compiler, PIP_NO_INDEX="1")
    env.pop("PYTHONPATH", None)
    install = subprocess.run(
        [python, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--quiet",
         str(clone / "client" / "python")], env=env, capture_output=True, text=True,
        timeout=300, check=False)
    assert install.returncode == 0, install.stdout + install.stderr
    script = f"""
import os, numpy, gpureduce
from gpureduce.v1 import reduce_pb2, reduce_pb2_grpc
assert gpureduce.__file__.startswith({str(venv)!r}), gpureduce.__file__
assert gpureduce.__version__ == "0.1.0"
assert os.path.exists(os.path.join(os.path.dirname(gpureduce.__file__), "py.typed"))
spec = reduce_pb2.ReduceSpec()
assert not spec.HasField("device"); spec.device = 0; assert spec.HasField("device")
with gpureduce.Client({server.target!r}) as client:
    print(repr(client.reduce(numpy.arange(10, dtype=numpy.int32), "sum")))
"""
    run = subprocess.run([python, "-c", script], cwd=str(tmp_path), env=env,
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() in ("45", "np.int64(45)")
    assert not list((clone / "client" / "python").glob("gpureduce/v1")), "stubs in the sources"
