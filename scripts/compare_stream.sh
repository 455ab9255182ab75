#!/usr/bin/env bash
# Streaming throughput of one backend against another (the CUDA backend against the CPU backend
# by default), measured fairly: both servers
# run side by side and the same client alternates between them, run by run, so that drift in the
# host (other load, clocks, page cache) falls on both alike. Prints each backend's median, min
# and max client GB/s and the ratio of the medians and of each pair.
# Usage: scripts/compare_stream.sh [--rounds N] [--count N] [--chunk SIZE] [--bin DIR]
#                                  [--backends "cuda cpu"]   (the first is compared to the second)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=25 count=100000000 chunk=1MiB bin=build/release backends="cuda cpu"
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --chunk) chunk=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --backends) backends=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
server=$(find "$bin" -name gpureduce-server -type f | head -1)
cli=$(find "$bin" -name gpureduce -type f | head -1)
workdir=$(mktemp -d)
source scripts/local_server.sh
pids=()
trap 'for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done;
      rm -rf "$workdir"' EXIT

read -r first second <<<"$backends"
declare -A target
for backend in $first $second; do
  start_local_server "$backend" "$server" "$cli" "$workdir"
  pids+=("$server_pid")
  target[$backend]=$server_target
  "$cli" reduce --random "$count" --chunk-size="$chunk" --target="${target[$backend]}" \
    >/dev/null  # warm-up, not counted
done

for round in $(seq "$rounds"); do
  # Alternate which backend goes first, so neither always follows the other.
  order="$first $second"; [ $((round % 2)) -eq 0 ] && order="$second $first"
  for backend in $order; do
    "$cli" reduce --random "$count" --seed "$round" --chunk-size="$chunk" --json \
      --target="${target[$backend]}" | sed "s/^/$round $backend /"
  done
done | python3 -c '
import json, statistics, sys
first, second = sys.argv[1:3]
runs = {first: {}, second: {}}
for line in sys.stdin:
    round_, backend, doc = line.split(" ", 2)
    runs[backend][int(round_)] = json.loads(doc)["client"]["gbps"]
print("| backend | runs | median GB/s | min | max |")
print("|---|---:|---:|---:|---:|")
for b in (first, second):
    v = list(runs[b].values())
    print("| %s | %d | %.2f | %.2f | %.2f |" % (b, len(v), statistics.median(v), min(v), max(v)))
pairs = sorted(runs[first][r] / runs[second][r] for r in runs[first] if r in runs[second])
ratio = statistics.median(runs[first].values()) / statistics.median(runs[second].values())
print()
print("%s/%s, ratio of medians: %.1f%%" % (first, second, 100 * ratio))
print("%s/%s, per pair: median %.1f%%, min %.1f%%, max %.1f%% over %d pairs" % (
    first, second, 100 * statistics.median(pairs), 100 * pairs[0], 100 * pairs[-1], len(pairs)))
' "$first" "$second"
echo
echo "chunk $chunk, $count floats per run, servers: $(grep -h 'backend' "$workdir"/server-*.log |
  sed 's/.*\] //' | paste -sd ';' -)"
