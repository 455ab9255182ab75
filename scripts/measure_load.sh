#!/usr/bin/env bash
# The service against its transport ceiling, in one run: gpureduce-load against the bare gRPC
# sink, a CUDA server and a CPU server, all started here, the three alternating case by case and
# round by round (who goes first rotates), so that every figure is a ratio to the sink measured
# beside it. Writes every run's JSON under OUT/runs/ and prints the tables of docs/load.md
# (scripts/summarize_load.py); scripts/plot_load.py draws the plots from the same folder.
# Usage: scripts/measure_load.sh [--bin DIR] [--out DIR] [--rounds N] [--duration D] [--quick]
#                                [--no-sweeps | --sweeps-only]
#   --no-sweeps: the goals' cases only (no plots' sweeps, crossover or CLI runs)
#   --sweeps-only: the plots' sweeps, the crossover and the CLI runs only (a second call's share
#                  where one call cannot hold both)
#   --quick: one round, 1 s runs, no sweeps (a smoke test, e.g. on a machine without a GPU,
#            where the "cuda" server is left out)
set -uo pipefail
cd "$(dirname "$0")/.."
bin=bin out=load-results rounds=2 duration=3s quick=0 sweeps=1 goals=1
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --quick) quick=1; rounds=1; duration=1s; shift ;;
    --no-sweeps) sweeps=0; shift ;;
    --sweeps-only) goals=0; shift ;;
    *) echo "measure_load: unknown argument $1" >&2; exit 2 ;;
  esac
done
find_bin() { find "$bin" -name "$1" -type f -perm -u+x | head -1; }
load=$(find_bin gpureduce-load) server=$(find_bin gpureduce-server) cli=$(find_bin gpureduce)
[ -n "$load" ] && [ -n "$server" ] && [ -n "$cli" ] || { echo "measure_load: no binaries in $bin" >&2; exit 2; }
mkdir -p "$out/runs"
workdir=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$workdir"' EXIT

# start NAME COMMAND...: runs a server on a free port; sets targets[NAME].
declare -A targets
start() {
  local name=$1
  shift
  "$@" --listen=127.0.0.1:0 --port-file="$workdir/port-$name" >"$out/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 300); do [ -s "$workdir/port-$name" ] && break; sleep 0.1; done
  targets[$name]="127.0.0.1:$(cat "$workdir/port-$name")"
  "$cli" health --target="${targets[$name]}" --wait=120s >/dev/null || { echo "$name did not start" >&2; cat "$out/$name.log"; exit 1; }
}
start sink "$load" sink
# Concurrency 64 needs more admission than the default 32; the crossover sends unary requests of
# up to 2^24 floats (64 MiB), beyond the default unary limit.
start cpu "$server" --backend=cpu --max-concurrent-requests=128 --max-request-bytes=64MiB
servers="sink cpu"
if "$server" --backend=cuda --help >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
  start cuda "$server" --backend=cuda --max-concurrent-requests=128 --max-request-bytes=64MiB
  servers="sink cuda cpu"
fi

# run CASE TARGET_NAME ROUND [gpureduce-load flags...]; "cuda:single_pass" names a forced kernel.
run() {
  local case=$1 who=$2 round=$3
  shift 3
  local name=${who%%:*} kernel=auto
  [[ $who == *:* ]] && kernel=${who#*:}
  "$load" --target="${targets[$name]}" --kernel="$kernel" --warmup=500ms --duration="$duration" \
    --label="$case $who" --json="$out/runs/$case--${who/:/-}--$round.json" --no-progress "$@" \
    >/dev/null 2>"$out/runs/$case--${who/:/-}--$round.err"
}

# matrix CASE "TARGETS" [flags...]: every target, `rounds` times, rotating who goes first.
matrix() {
  local case=$1 list=($2)
  shift 2
  for round in $(seq "$rounds"); do
    local n=${#list[@]}
    for i in $(seq 0 $((n - 1))); do
      run "$case" "${list[$(((i + round) % n))]}" "$round" "$@"
    done
    echo "  $case round $round done" >&2
  done
}

cuda_too() { [[ $servers == *cuda* ]] && echo "$1 $2" || echo "$1"; }
echo "measure_load: servers $servers; $rounds rounds of $duration" >&2
if [ "$goals" -eq 1 ]; then
  matrix stream-1MiB "$servers" --bytes=512MiB --chunk-size=1MiB --concurrency=1
  matrix stream-4MiB "$servers" --bytes=512MiB --chunk-size=4MiB --concurrency=1
  matrix streams-8 "$servers" --bytes=256MiB --chunk-size=1MiB --concurrency=8 --connections=8
  matrix streams-32 "$servers" --bytes=64MiB --chunk-size=1MiB --concurrency=32 --connections=8
  matrix unary-1Ki-c1 "$servers $(cuda_too '' cuda:single_pass)" --floats=1024 --concurrency=1
  matrix unary-1Ki-c64 "$servers" --floats=1024 --concurrency=64 --connections=4
  matrix unary-1Mi-c16 "$servers" --floats=262144 --concurrency=16 --connections=4
fi

if [ "$quick" -eq 0 ] && [ "$sweeps" -eq 1 ]; then
  # For the plots: latency against concurrency, GB/s against streams; one round each.
  gpu=$([[ $servers == *cuda* ]] && echo cuda || echo cpu)
  for c in 1 2 4 8 16 32 64; do
    rounds=1 matrix "sweep-unary-c$c" "sink $gpu" --floats=1024 --concurrency="$c" --connections=4
  done
  for s in 1 2 4 8 16 32; do
    rounds=1 matrix "sweep-streams-$s" "sink $gpu" --bytes=128MiB --chunk-size=1MiB \
      --concurrency="$s" --connections="$((s < 8 ? s : 8))"
  done
  # The crossover of measured `auto`: each size on the GPU (forced), on the CPU server, and by
  # the CUDA server's `auto` (measured at its start: it should take the faster).
  if [[ $servers == *cuda* ]]; then
    for e in 10 12 14 16 18 20 22 24; do
      rounds=1 matrix "crossover-2^$e" "cuda cuda:single_pass cpu" --floats=$((1 << e)) \
        --concurrency=1
    done
  fi
  # One CLI call, one stream against eight (gpureduce reduce --streams).
  for round in $(seq "$rounds"); do
    for streams in 1 8; do
      "$cli" reduce --random 268435456 --chunk-size=4MiB --streams="$streams" --json \
        --target="${targets[$gpu]}" >"$out/runs/cli-streams-$streams--$gpu--$round.cli.json"
    done
  done
fi

python3 scripts/summarize_load.py "$out"
