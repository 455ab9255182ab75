#!/bin/bash
# Issue 23: one extreme op over 16-bit floats' short runs by their keys. On the host's AVX-512
# copy: the kernels' short runs and array paths' tests, then the CPU bench, 7108af5's (base)
# against the change's (cand), 16 threads, alternating rounds (`run.sh tests`: the tests alone).
set -u
xz -dkf dist/old-bench/gpureduce-cpu-bench.xz; P=$(ls dist/gpureduce-*.tar.gz); tar xzf "$P" -C /tmp; D=/tmp/$(basename "$P" .tar.gz)
{ grep commit "$D/VERSION"; uptime; lscpu | grep -E "Model name|^CPU\(s\)"; lscpu | grep -o "avx512[a-z_0-9]*" | sort -u | tr '\n' ' '; echo; } > "$OUT/host.txt" 2>&1
F='*RunsPass*:*RunsAnswers*:*RowsReduce*:*SegmentedReduce*:*ColumnPass*:*ParallelReduce*:*ShapedSession*:*EncodeAnswers*:*CpuReduce*'
timeout 240 "$D/bin/gpureduce-tests" --gtest_filter="$F" > "$OUT/tests.txt" 2>&1
echo "tests rc $? at ${SECONDS}s" >> "$OUT/host.txt"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|seed [0-9]|Failure|differ" "$OUT/tests.txt" | head -60 > "$OUT/tests-summary.txt"
grep -E "^\[ +(OK|FAILED|SKIPPED) " "$OUT/tests.txt" > "$OUT/tests-lines.txt"
tail -c 3000 "$OUT/tests.txt" > "$OUT/tests-tail.txt"; rm -f "$OUT/tests.txt"
[ "${1:-}" = tests ] && exit 0
L="whole,rows 8,rows 16,rows 100,rows 128,rows 512,segment 16,segment 128"
timeout 300 python3 scripts/cpu_bench_compare.py --baseline dist/old-bench/gpureduce-cpu-bench \
  --candidate "$D/bin/gpureduce-cpu-bench" --threads 16 --rounds 3 --dtypes float32,float16,bfloat16 \
  --ops sum,min --layouts "$L" > "$OUT/compare.txt" 2>&1
echo "compare rc $? at ${SECONDS}s" >> "$OUT/host.txt"
