#!/usr/bin/env bash
# Runs the packaged test suite, bin/gpureduce-tests, and keeps its JUnit XML and log.
# Usage: scripts/run-tests.sh [--out DIR] [GTEST ARGS...]
#   --out DIR   where the results go (default: test-results/<UTC time> in the package)
#   the rest is passed to gpureduce-tests, e.g. --gtest_filter='ReduceOpsTest.*'
# The integration tests start bin/gpureduce-server and bin/gpureduce from this package, with the
# CPU backend unless GPUREDUCE_TEST_BACKEND=cuda is set.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/test-results/$(date -u +%Y%m%dT%H%M%SZ)"
case "${1:-}" in
  --out) out=$2; shift 2 ;;
  --out=*) out=${1#--out=}; shift ;;
esac
mkdir -p "$out"
out=$(cd "$out" && pwd)

{
  cat "$root/VERSION"
  echo "run on: $(uname -srm), $(ldd --version 2>/dev/null | head -1)"
  echo "arguments: $*; GPUREDUCE_TEST_BACKEND=${GPUREDUCE_TEST_BACKEND:-}"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader |
      sed 's/^/gpu: /' || true
  else
    echo "gpu: none (no nvidia-smi)"
  fi
} >"$out/environment.txt"

set +e
"$root/bin/gpureduce-tests" --gtest_output="xml:$out/gpureduce-tests.xml" "$@" 2>&1 |
  tee "$out/gpureduce-tests.log"
status=${PIPESTATUS[0]}
set -e
echo "run-tests: gpureduce-tests exited $status; results in $out"
exit "$status"
