#!/usr/bin/env bash
# Soaks a server with mixed traffic (not part of CI): starts gpureduce-server, runs gpureduce-soak
# against it for DURATION and writes the report, then stops the server with SIGTERM and checks
# that it exits 0. docs/reliability.md has the runs.
# Usage: scripts/soak.sh [--backend cpu|cuda] [--duration 10m] [--out DIR] [--bin DIR]
#   --bin: where the binaries are (default build/release's, or bin/ inside the package)
set -euo pipefail
cd "$(dirname "$0")/.."
backend=cpu duration=10m out=soak-results bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --backend) backend=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "soak: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$bin" ]; then
  if [ -x bin/gpureduce-soak ]; then bin=bin; else bin=build/release; fi
fi
find_binary() {
  for candidate in "$bin/$1" "$bin/server/$1" "$bin/client/cli/$1" "$bin/tests/soak/$1"; do
    [ -x "$candidate" ] && { echo "$candidate"; return; }
  done
  echo "soak: no $1 under $bin" >&2
  exit 2
}
server=$(find_binary gpureduce-server)
cli=$(find_binary gpureduce)
soak=$(find_binary gpureduce-soak)
mkdir -p "$out"
# shellcheck source=scripts/local_server.sh
source scripts/local_server.sh

idle=2s max_request=8MiB
server_pid=""
# Whatever ends this script (an error, Ctrl-C), the server does not outlive it.
trap '[ -n "$server_pid" ] && kill -TERM "$server_pid" 2>/dev/null' EXIT
start_local_server "$backend" "$server" "$cli" "$out" --stream-idle-timeout=$idle \
  --max-request-bytes=$max_request --log-level=warn
gpu_flag=()
[ "$backend" = cuda ] && gpu_flag=(--gpu)
status=0
"$soak" --target="$server_target" --server-pid="$server_pid" --duration="$duration" \
  --idle-timeout=$idle --max-request-bytes=$max_request "${gpu_flag[@]}" \
  --report="$out/soak-$backend.md" || status=$?
kill -TERM "$server_pid"
server_status=0
wait "$server_pid" || server_status=$?
server_pid=""
echo "server exit status after SIGTERM: $server_status" | tee -a "$out/soak-$backend.md"
[ "$server_status" -eq 0 ] || status=1
exit $status
