#!/bin/bash
# Issue 23: 16-bit floats' columns in strips (kernels/cpu/half_strips.h). On the host's AVX-512
# copy: probe_calls.cc (built here against the package's build tree, carried as
# probe_calls.bin.xz) on 16 threads twice, the kernels' array paths' tests, then the CPU bench,
# fb1f8c6's (base) against the change's (cand), 16 threads, 5 alternating rounds
# (`run.sh tests`: the tests alone). probe.cc, the first call's probe, ran as ./probe.bin 1|16.
set -u
xz -dkf dist/old-bench/gpureduce-cpu-bench.xz; P=$(ls dist/gpureduce-*.tar.gz); tar xzf "$P" -C /tmp; D=/tmp/$(basename "$P" .tar.gz)
{ grep commit "$D/VERSION"; uptime; lscpu | grep -E "Model name|^CPU\(s\)"; lscpu | grep -o "avx512[a-z_0-9]*" | sort -u | tr '\n' ' '; echo; } > "$OUT/host.txt" 2>&1
if [ -f probe_calls.bin.xz ]; then
  xz -dkf probe_calls.bin.xz; { ./probe_calls.bin 16; ./probe_calls.bin 16; } > "$OUT/probe-calls.txt" 2>&1
fi
F='*ColumnPass*:*ColumnsReduce*:*RowsReduce*:*SegmentedReduce*:*ParallelReduce*:*ShapedSession*:*CpuReduce*'
timeout 240 "$D/bin/gpureduce-tests" --gtest_filter="$F" > "$OUT/tests.txt" 2>&1
echo "tests rc $? at ${SECONDS}s" >> "$OUT/host.txt"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|seed [0-9]|Failure|differ" "$OUT/tests.txt" | head -60 > "$OUT/tests-summary.txt"
grep -E "^\[ +(OK|FAILED|SKIPPED) " "$OUT/tests.txt" > "$OUT/tests-lines.txt"
tail -c 3000 "$OUT/tests.txt" > "$OUT/tests-tail.txt"; rm -f "$OUT/tests.txt"
[ "${1:-}" = tests ] && exit 0
L="whole,columns 64,columns 256,columns 1024,columns 4096,columns 16384"
timeout 400 python3 scripts/cpu_bench_compare.py --baseline dist/old-bench/gpureduce-cpu-bench \
  --candidate "$D/bin/gpureduce-cpu-bench" --threads 16 --rounds 5 --dtypes float32,float16,bfloat16 \
  --ops sum,min,var --layouts "$L" > "$OUT/compare.txt" 2>&1
echo "compare rc $? at ${SECONDS}s" >> "$OUT/host.txt"
# SUM_SQUARES and PROD (the change's bench alone: fb1f8c6's has neither case), every dtype.
for l in "" "--rows=16" "--rows=128" "--segment=16" "--columns=64" "--columns=1024" "--columns=16384"; do
  echo "== ${l:-whole}"; timeout 60 "$D/bin/gpureduce-cpu-bench" --threads 16 --runs 5 --bytes 128MiB \
    --dtypes float32,float16,bfloat16,float64,int32,int64 --ops sum,sumsq,prod $l
done > "$OUT/sumsq-prod.txt" 2>&1
echo "sumsq-prod rc $? at ${SECONDS}s" >> "$OUT/host.txt"
