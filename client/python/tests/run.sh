#!/usr/bin/env bash
# Runs the Python client's tests against the real server, on the package as `pip install` makes
# it: a fresh virtual environment over Debian's python3 (with its system site packages: grpcio,
# protobuf, NumPy, pytest, PyTorch where installed) in the build tree, the package installed
# into it offline from a copy of client/python and proto/ (pip builds it, generating the stubs).
# Usage: run.sh PYTHON_BUILD_DIR SERVER_BINARY PYTHON_DOC (the environment goes beside
# PYTHON_BUILD_DIR, as python-venv); exit 77 (CTest: skipped) with the reason when python3 lacks
# what the client, its build or its tests need.
set -euo pipefail
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3 || true)
missing=$("$python" -c 'import importlib.util as u
print(" ".join(m for m in ("grpc", "google.protobuf", "numpy", "pytest", "pip", "setuptools",
                           "wheel", "venv") if u.find_spec(m) is None))' 2>/dev/null) ||
  missing="a working python3"
if [ -n "$missing" ]; then
  echo "SKIPPED: $python lacks $missing (scripts/setup.sh installs python3-grpcio, python3-protobuf, python3-numpy, python3-pytest, python3-pip, python3-venv)"
  exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(dirname "$here")
repository=$(cd "$source_dir/../.." && pwd)
build=$(cd "$(dirname "$1")" && pwd)
venv=$build/python-venv
staging=$build/python-source
SECONDS=0
rm -rf "$staging" && mkdir -p "$staging/client"
cp -r "$repository/proto" "$staging/proto"
(cd "$source_dir" && tar --exclude=./build --exclude=./dist --exclude='./*.egg-info' \
   --exclude=__pycache__ --exclude=./tests -cf - .) | (mkdir -p "$staging/client/python" &&
   cd "$staging/client/python" && tar -xf -)
"$python" -m venv --clear --system-site-packages --without-pip "$venv"
# Debian's pip (python3-pip), run by the environment's interpreter, installs into it.
PYTHONPATH= "$venv/bin/python" -m pip install --quiet --no-build-isolation --no-index \
  --no-cache-dir "$staging/client/python"
echo "run.sh: installed gpureduce into $venv in ${SECONDS} s"
cd "$build"
export GPUREDUCE_SERVER_BINARY=$2 GPUREDUCE_PYTHON_DOC=$3 GPUREDUCE_TEST_INSTALLED=$venv
unset PYTHONPATH
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$here"
