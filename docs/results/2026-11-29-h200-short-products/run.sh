#!/bin/bash
# Issue 23, seventeenth session. On one H200 host from the package: (1) the GPU tests of the
# integer products' exact range (int_product.h: +2^63 a state of its own) and the stats and
# segmented kernels beside them, the new stats test under compute-sanitizer; (2) the kernels'
# array tests on the host's AVX-512 copy; (3) the CPU bench, c0aa83d's (base) against the
# package's (cand: short float runs' products by copies of whole groups, NaN-free first), 16
# threads, 3 alternating rounds, SUM beside PROD (`run.sh tests`: (1) and (2) alone; GPU=0
# leaves (1) out).
set -u
xz -dkf dist/old-bench/gpureduce-cpu-bench-c0aa83d.xz; chmod +x dist/old-bench/gpureduce-cpu-bench-c0aa83d
P=$(ls dist/gpureduce-*.tar.gz); tar xzf "$P" -C /tmp; D=/tmp/$(basename "$P" .tar.gz)
{ grep commit "$D/VERSION"; uptime; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E "Model name|^CPU\(s\)"; lscpu | grep -o "avx512[a-z_0-9]*" | sort -u | tr '\n' ' '; echo; } > "$OUT/host.txt" 2>&1
if [ "${GPU:-1}" = 1 ]; then
G='*StatsKernel*:*SegmentedStats*:*IntegerProduct*:*MergeStats*:*TypedReference*:*CudaBackend*'
timeout 300 "$D/bin/gpureduce-tests" --gtest_filter="$G" > "$OUT/gpu-tests.txt" 2>&1
echo "gpu tests rc $? at ${SECONDS}s" >> "$OUT/host.txt"
S=$(ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -n "$S" ]; then
  timeout 120 "$S" --error-exitcode 9 "$D/bin/gpureduce-tests" --gtest_filter='StatsKernelTest.IntegerProductsThroughTwoTo63' > "$OUT/sanitizer.txt" 2>&1
  echo "sanitizer rc $? at ${SECONDS}s" >> "$OUT/host.txt"
fi
fi
F='*Product*:*RunsPass*:*RunsAnswers*:*ColumnPass*:*ColumnsReduce*:*RowsReduce*:*SegmentedReduce*:*ParallelReduce*:*ShapedSession*:*CpuReduce*'
timeout 240 "$D/bin/gpureduce-tests" --gtest_filter="$F" > "$OUT/tests.txt" 2>&1
echo "cpu tests rc $? at ${SECONDS}s" >> "$OUT/host.txt"
for t in gpu-tests tests; do
  [ -f "$OUT/$t.txt" ] || continue
  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|tests? from .* ran|seed [0-9]|Failure|differ" "$OUT/$t.txt" | head -60 > "$OUT/$t-summary.txt"
  grep -E "^\[ +(OK|FAILED|SKIPPED) " "$OUT/$t.txt" > "$OUT/$t-lines.txt"
  tail -c 3000 "$OUT/$t.txt" > "$OUT/$t-tail.txt"; rm -f "$OUT/$t.txt"
done
[ "${1:-}" = tests ] && exit 0
L="whole,rows 8,rows 16,rows 128,segment 16,segment 128,columns 64,columns 1024,columns 16384"
timeout 240 python3 scripts/cpu_bench_compare.py --baseline dist/old-bench/gpureduce-cpu-bench-c0aa83d \
  --candidate "$D/bin/gpureduce-cpu-bench" --threads 16 --rounds 3 --dtypes float32,float16,bfloat16,float64 \
  --ops sum,prod --layouts "$L" > "$OUT/compare.txt" 2>&1
echo "compare rc $? at ${SECONDS}s" >> "$OUT/host.txt"
