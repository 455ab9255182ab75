#!/usr/bin/env bash
# Measures end-to-end streaming through a local server: for each chunk size, the median of N runs
# of `gpureduce reduce --random COUNT`, and the server's peak resident memory afterwards.
# Usage: scripts/measure_stream.sh [--backend cpu|cuda] [--count N] [--runs N] [--bin DIR]
#        [--chunks "64KiB 1MiB ..."] [--server-flag FLAG]...   (e.g. --server-flag --bdp-probe)
set -euo pipefail
cd "$(dirname "$0")/.."
backend=auto count=100000000 runs=5 bin=build/release chunks="64KiB 256KiB 1MiB 4MiB"
server_flags=()
while [ $# -gt 0 ]; do
  case "$1" in
    --backend) backend=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --chunks) chunks=$2; shift 2 ;;
    --server-flag) server_flags+=("$2"); shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
server=$(find "$bin" -name gpureduce-server -type f | head -1)
cli=$(find "$bin" -name gpureduce -type f | head -1)
workdir=$(mktemp -d)
source scripts/local_server.sh
trap 'kill -TERM ${server_pid:-} 2>/dev/null; wait ${server_pid:-} 2>/dev/null; rm -rf "$workdir"' EXIT
start_local_server "$backend" "$server" "$cli" "$workdir" ${server_flags[@]+"${server_flags[@]}"}
pid=$server_pid target=$server_target

echo "| chunk | runs | client GB/s (median) | server GB/s | compute GB/s | server ms |"
echo "|---|---:|---:|---:|---:|---:|"
for chunk in $chunks; do
  for _ in $(seq "$runs"); do
    "$cli" reduce --random "$count" --chunk-size="$chunk" --json --target="$target"
  done | python3 -c '
import json, statistics, sys
rows = [json.loads(line) for line in sys.stdin]
med = lambda f: statistics.median(f(r) for r in rows)
print("| %s | %d | %.2f | %.2f | %.2f | %.1f |" % (sys.argv[1], len(rows),
      med(lambda r: r["client"]["gbps"]), med(lambda r: r["timing"]["server_gbps"]),
      med(lambda r: r["timing"]["kernel_gbps"]), med(lambda r: r["timing"]["server_us"] / 1e3)))
' "$chunk"
done
echo
echo "server: $(grep -h 'backend' "$workdir/server-$backend.log" | head -1 | sed 's/.*\] //')"
echo "server peak resident memory (VmHWM): $(awk '/VmHWM/ {print $2/1024 " MiB"}' /proc/$pid/status)"
