#!/bin/bash
# Issue 23: PROD on every layout (kernels/cpu/product_lanes.h, run_products.h, the columns pass's
# products). On the host's AVX-512 copy: the kernels' array paths' tests, then the CPU bench,
# 1d638b4's (base) against the change's (cand), 16 threads, 3 alternating rounds, SUM beside
# PROD, floats then integers (each with float32, the yardstick) (`run.sh tests`: the tests
# alone).
set -u
xz -dkf dist/old-bench/gpureduce-cpu-bench-1d638b4.xz; P=$(ls dist/gpureduce-*.tar.gz); tar xzf "$P" -C /tmp; D=/tmp/$(basename "$P" .tar.gz)
{ grep commit "$D/VERSION"; uptime; lscpu | grep -E "Model name|^CPU\(s\)"; lscpu | grep -o "avx512[a-z_0-9]*" | sort -u | tr '\n' ' '; echo; } > "$OUT/host.txt" 2>&1
F='*Product*:*RunsPass*:*RunsAnswers*:*ColumnPass*:*ColumnsReduce*:*RowsReduce*:*SegmentedReduce*:*ParallelReduce*:*ShapedSession*:*CpuReduce*'
timeout 240 "$D/bin/gpureduce-tests" --gtest_filter="$F" > "$OUT/tests.txt" 2>&1
echo "tests rc $? at ${SECONDS}s" >> "$OUT/host.txt"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|seed [0-9]|Failure|differ" "$OUT/tests.txt" | head -60 > "$OUT/tests-summary.txt"
grep -E "^\[ +(OK|FAILED|SKIPPED) " "$OUT/tests.txt" > "$OUT/tests-lines.txt"
tail -c 3000 "$OUT/tests.txt" > "$OUT/tests-tail.txt"; rm -f "$OUT/tests.txt"
[ "${1:-}" = tests ] && exit 0
chmod +x dist/old-bench/gpureduce-cpu-bench-1d638b4
L="whole,rows 16,rows 128,rows 1024,segment 16,segment 128,columns 64,columns 1024,columns 16384"
for d in floats:float32,float16,bfloat16,float64 ints:float32,int32,int64; do
  timeout 240 python3 scripts/cpu_bench_compare.py --baseline dist/old-bench/gpureduce-cpu-bench-1d638b4 \
    --candidate "$D/bin/gpureduce-cpu-bench" --threads 16 --rounds 3 --dtypes "${d#*:}" \
    --ops sum,prod --layouts "$L" > "$OUT/compare-${d%%:*}.txt" 2>&1
  echo "compare $d rc $? at ${SECONDS}s" >> "$OUT/host.txt"
done
