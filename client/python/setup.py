"""Builds the gpureduce package: the sources in gpureduce/ plus the gRPC stubs gpureduce/v1/
{reduce_pb2,reduce_pb2_grpc}.py, generated here from proto/gpureduce/v1/reduce.proto (never
committed). Metadata is pyproject.toml's.

The proto is looked for in $GPUREDUCE_PROTO_ROOT, ./proto (an sdist carries it there) and
../../proto (the repository: `pip install client/python` builds in place). The compiler, in
this order:
  1. protoc and grpc_python_plugin on PATH (or $PROTOC, $GRPC_PYTHON_PLUGIN): Debian's
     protobuf-compiler and protobuf-compiler-grpc, what the CMake build uses;
  2. grpc_tools.protoc (python3-grpc-tools, pip's grpcio-tools). Debian 12's bundles protoc 3.5,
     which predates proto3 `optional` (3.15): the proto is then compiled with each `optional`
     field written as the one-field oneof `_<name>` that newer compilers make of it (the same
     wire format and the same HasField in Python).
GPUREDUCE_PROTOC=grpc_tools picks the second where both are present.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.join("gpureduce", "v1", "reduce.proto")


def proto_root() -> str:
    candidates = [os.environ.get("GPUREDUCE_PROTO_ROOT", ""), os.path.join(HERE, "proto"),
                  os.path.join(HERE, "..", "..", "proto")]
    for root in candidates:
        if root and os.path.isfile(os.path.join(root, PROTO)):
            return os.path.abspath(root)
    raise RuntimeError(
        f"gpureduce: {PROTO} not found in {', '.join(c for c in candidates if c)}; build from the "
        "repository (pip install client/python) or set GPUREDUCE_PROTO_ROOT to its proto/ folder")


def _protoc_version(command) -> tuple:
    output = subprocess.run(command + ["--version"], capture_output=True, text=True,
                            check=False).stdout
    match = re.search(r"(\d+)\.(\d+)", output)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def _without_optional(text: str) -> str:
    """proto3 `optional T name = N;` as protoc >= 3.15 sees it: a field in a oneof of its own."""
    return re.sub(r"^(\s*)optional\s+([\w.]+)\s+(\w+)\s*=\s*(\d+)\s*;",
                  r"\1oneof _\3 { \2 \3 = \4; }", text, flags=re.M)


def generate(out_dir: str) -> None:
    """Writes gpureduce/v1/{__init__,reduce_pb2,reduce_pb2_grpc}.py under `out_dir`."""
    root = proto_root()
    os.makedirs(os.path.join(out_dir, "gpureduce", "v1"), exist_ok=True)
    protoc = os.environ.get("PROTOC") or shutil.which("protoc")
    plugin = os.environ.get("GRPC_PYTHON_PLUGIN") or shutil.which("grpc_python_plugin")
    if protoc and plugin and os.environ.get("GPUREDUCE_PROTOC") != "grpc_tools":
        command = [protoc, f"--plugin=protoc-gen-grpc={plugin}", f"--proto_path={root}",
                   f"--python_out={out_dir}", f"--grpc_out={out_dir}",
                   os.path.join(root, PROTO)]
        subprocess.run(command, check=True)
    else:
        try:
            import grpc_tools.protoc  # pylint: disable=import-outside-toplevel
        except ImportError:
            raise RuntimeError(
                "gpureduce: generating the gRPC stubs needs protoc and grpc_python_plugin (Debian: "
                "apt install protobuf-compiler protobuf-compiler-grpc) or grpc_tools (Debian: "
                "python3-grpc-tools; pip: grpcio-tools)") from None
        command = [sys.executable, "-m", grpc_tools.protoc.__name__]
        with tempfile.TemporaryDirectory() as scratch:
            source = root
            if _protoc_version(command) < (3, 15):
                source = scratch
                os.makedirs(os.path.join(scratch, os.path.dirname(PROTO)))
                with open(os.path.join(root, PROTO), encoding="utf-8") as f:
                    text = _without_optional(f.read())
                with open(os.path.join(scratch, PROTO), "w", encoding="utf-8") as f:
                    f.write(text)
            subprocess.run(command + [f"--proto_path={source}", f"--python_out={out_dir}",
                                      f"--grpc_python_out={out_dir}",
                                      os.path.join(source, PROTO)], check=True)
    with open(os.path.join(out_dir, "gpureduce", "v1", "__init__.py"), "w",
              encoding="utf-8") as f:
        f.write('"""gpureduce.v1: stubs generated from proto/gpureduce/v1/reduce.proto."""\n')


class BuildPy(build_py):
    """build_py, then the stubs beside the sources in the build tree."""

    def run(self):
        super().run()
        generate(self.build_lib)


class SDist(sdist):
    """An sdist that carries the proto (under proto/), so that it builds away from the
    repository."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        target = os.path.join(base_dir, "proto", PROTO)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(proto_root(), PROTO), target)


# gpureduce.v1 has no folder in the sources: BuildPy writes it into the build tree.
setup(packages=["gpureduce"], package_data={"gpureduce": ["py.typed"]},
      cmdclass={"build_py": BuildPy, "sdist": SDist})
