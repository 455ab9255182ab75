#!/usr/bin/env bash
# The fuzzing campaign of docs/reliability.md: builds the fuzz preset, then runs each fuzz target
# (every folder of tests/fuzz/corpus/, or the ones named) for SECONDS over a fresh copy of its seed
# corpus, JOBS at a time and niced, with tests/fuzz/run_fuzzer.cmake as the fuzz.* tests run it.
# Prints one summary line per target: runs, coverage (edges of the instrumented code), corpus
# growth, crashes. Fails when any target found something; the input that did it and the log stay
# in build/fuzz/campaign/<target>/.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (default 900 s, every target; JOBS=2)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-900}"
if [ $# -gt 0 ]; then shift; fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(ls tests/fuzz/corpus)
fi
jobs="${JOBS:-2}"

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
campaign="$PWD/build/fuzz/campaign"
mkdir -p "$campaign"
commit="$(git rev-parse --short HEAD)"
git diff --quiet HEAD -- . || commit="$commit (with uncommitted changes)"
cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "fuzz: ${#targets[@]} targets x ${seconds} s, ${jobs} at a time; commit ${commit};" \
     "$(date -u +%Y-%m-%d); ${cpu}, $(nproc) cores; $(clang++ --version | head -n1)"

run_one() {
  local target="$1"
  if nice -n 10 cmake -DNAME="$target" -DFUZZER="$PWD/build/fuzz/tests/fuzz/$target" \
       -DSOURCE_DIR="$PWD/tests/fuzz" -DWORK="$campaign/$target" -DSECONDS="$seconds" \
       -P tests/fuzz/run_fuzzer.cmake >"$campaign/$target.out" 2>&1; then
    echo 0 >"$campaign/$target.rc"
  else
    echo 1 >"$campaign/$target.rc"
  fi
}

for target in "${targets[@]}"; do
  rm -f "$campaign/$target.rc" "$campaign/$target.out"
done
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  run_one "$target" &
done
wait

failed=0
for target in "${targets[@]}"; do
  grep -h '^fuzz ' "$campaign/$target.out" || echo "fuzz $target: no summary"
  if [ "$(cat "$campaign/$target.rc" 2>/dev/null)" != 0 ]; then
    failed=1
    echo "  FAILED: see $campaign/$target.out and $campaign/$target/" >&2
  fi
done
exit "$failed"
