#!/bin/bash
# Issue 23, eighteenth session. On one H200 host from the package (its AVX-512 CPU; no GPU work):
# (1) the kernels' and the runtime's array tests (the short runs pass's answers of every copy,
# integers' products eight runs at a time among them); (2) the CPU bench, the baseline's
# (BASE, dist/old-bench) against the package's, 16 threads, 3 alternating rounds, PROD beside
# the whole array's float32 SUM (the yardstick). `run.sh tests`: (1) alone.
set -u
BASE=${BASE:-76ebb60}
xz -dkf dist/old-bench/gpureduce-cpu-bench-$BASE.xz; chmod +x dist/old-bench/gpureduce-cpu-bench-$BASE
P=$(ls dist/gpureduce-*.tar.gz); tar xzf "$P" -C /tmp; D=/tmp/$(basename "$P" .tar.gz)
{ grep commit "$D/VERSION"; uptime; lscpu | grep -E "Model name|^CPU\(s\)"; lscpu | grep -o "avx512[a-z_0-9]*" | sort -u | tr '\n' ' '; echo; } > "$OUT/host.txt" 2>&1
F='*Product*:*RunsPass*:*RunsAnswers*:*ColumnPass*:*ColumnsReduce*:*RowsReduce*:*SegmentedReduce*:*ParallelReduce*:*ShapedSession*:*CpuReduce*:*ArrayResults*'
timeout 240 "$D/bin/gpureduce-tests" --gtest_filter="$F" > "$OUT/tests.txt" 2>&1
echo "cpu tests rc $? at ${SECONDS}s" >> "$OUT/host.txt"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|tests? from .* ran|seed [0-9]|Failure|differ" "$OUT/tests.txt" | head -60 > "$OUT/tests-summary.txt"
grep -E "^\[ +(OK|FAILED|SKIPPED) " "$OUT/tests.txt" > "$OUT/tests-lines.txt"
tail -c 3000 "$OUT/tests.txt" > "$OUT/tests-tail.txt"; rm -f "$OUT/tests.txt"
[ "${1:-}" = tests ] && exit 0
L=${LAYOUTS:-"whole,rows 16,rows 128,segment 16,segment 128,columns 16384"}
timeout 300 python3 scripts/cpu_bench_compare.py --baseline dist/old-bench/gpureduce-cpu-bench-$BASE \
  --candidate "$D/bin/gpureduce-cpu-bench" --threads 16 --rounds 3 --dtypes ${DTYPES:-float32,float16,int32,int64} \
  --ops sum,prod --layouts "$L" > "$OUT/compare.txt" 2>&1
echo "compare rc $? at ${SECONDS}s" >> "$OUT/host.txt"
