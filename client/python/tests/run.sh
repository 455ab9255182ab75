#!/usr/bin/env bash
# Runs the Python client's tests with Debian's python3 against the real server.
# Usage: run.sh PYTHONPATH_DIR SERVER_BINARY PYTHON_DOC; exit 77 (CTest: skipped) with the reason
# when python3 lacks what the client needs.
set -euo pipefail
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3 || true)
missing=$("$python" -c 'import importlib.util as u
print(" ".join(m for m in ("grpc", "google.protobuf", "numpy", "pytest") if u.find_spec(m) is None))' 2>/dev/null) ||
  missing="a working python3"
if [ -n "$missing" ]; then
  echo "SKIPPED: $python lacks $missing (scripts/setup.sh installs python3-grpcio, python3-protobuf, python3-numpy, python3-pytest)"
  exit 77
fi
export PYTHONPATH=$1 GPUREDUCE_SERVER_BINARY=$2 GPUREDUCE_PYTHON_DOC=$3
exec "$python" -m pytest -q -p no:cacheprovider "$(dirname "$0")"
