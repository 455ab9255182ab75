#!/usr/bin/env bash
# Two gpureduce-bench binaries measured against each other in one run: the production suite,
# baseline and candidate alternating round by round (which goes first alternates too), so that
# drift in the host falls on both alike. Writes each run's JSON and prints, per op and size,
# each binary's median of its rounds' medians, the spread between rounds and the ratio, with
# CUB measured in every run beside both. For a change that must not move performance.
# Usage: scripts/bench_compare.sh --baseline BENCH --candidate BENCH [--sizes N,N] [--rounds N]
#                                 [--runs N] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
baseline="" candidate="" sizes=1048576,16777216,1073741824 rounds=3 runs=100 out=bench-compare
while [ $# -gt 0 ]; do
  case "$1" in
    --baseline) baseline=$2; shift 2 ;;
    --candidate) candidate=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "bench_compare: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$baseline" ] && [ -x "$candidate" ] || { echo "bench_compare: need --baseline and --candidate binaries" >&2; exit 2; }
mkdir -p "$out"
for round in $(seq "$rounds"); do
  order=(baseline candidate)
  [ $((round % 2)) -eq 0 ] && order=(candidate baseline)
  for which in "${order[@]}"; do
    binary=$baseline
    [ "$which" = candidate ] && binary=$candidate
    echo "round $round: $which ($binary)" >&2
    "$binary" --suite production --sizes "$sizes" --runs "$runs" \
      --json "$out/$which-$round.json" >"$out/$which-$round.md"
  done
done
python3 scripts/bench_compare.py "$out"
