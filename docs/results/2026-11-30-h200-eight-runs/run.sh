#!/bin/bash
# Issue 23, nineteenth session. On one H200 host from the package (its AVX-512 CPU; no GPU work).
# `run.sh tests`: the kernels' and the runtime's array tests (FILTER; every copy of the short runs
# pass's answers against the Stats'). `run.sh compare`: the CPU bench, the baseline's (BASE, from
# dist/old-bench) against the package's, 16 threads, ROUNDS alternating rounds, each cell beside
# the whole array's float32 SUM, into compare-BASE.txt. No argument: both. The package may be a
# slim one (bin/ with the tests and the CPU bench, lib/), so the suites that start a server are
# left out. Everything gathered so far lands in $OUT/run.tgz after each step.
set -u
BASE=${BASE:-abafa13}
W=/tmp/w; mkdir -p $W
P=$(ls dist/gpureduce-*.tar.*); D=/tmp/$(basename "$P" | sed "s/\.tar\..*//")
[ -d "$D" ] || tar xf "$P" -C /tmp
[ -f $W/host.txt ] || { grep commit "$D/VERSION"; uptime; lscpu | grep -E "Model name|^CPU\(s\)"; } > $W/host.txt 2>&1
if [ "${1:-tests}" = tests ]; then
  F=${FILTER:-'*Product*:*RunsPass*:*RunsAnswers*:*ColumnPass*:*ColumnsReduce*:*RowsReduce*:*SegmentedReduce*:*ParallelReduce*:*ShapedSession*:*CpuReduce*:*ArrayResults*:-*ArrayApi*'}
  timeout 240 "$D/bin/gpureduce-tests" --gtest_filter="$F" > $W/tests.txt 2>&1
  echo "cpu tests ($F) rc $? at ${SECONDS}s" >> $W/host.txt
  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|tests? from .* ran|Failure|differ" $W/tests.txt | head -60 > $W/tests-summary.txt
  grep -E "^\[ +(OK|FAILED|SKIPPED) " $W/tests.txt > $W/tests-lines.txt; rm -f $W/tests.txt
fi
if [ "${1:-compare}" = compare ]; then
  xz -dkc dist/old-bench/gpureduce-cpu-bench-$BASE.xz > $W/bench-$BASE; chmod +x $W/bench-$BASE
  L=${LAYOUTS:-"whole,rows 16,rows 32,rows 64,segment 16,segment 128"}
  timeout ${LIMIT:-300} python3 scripts/cpu_bench_compare.py --baseline $W/bench-$BASE \
    --candidate "$D/bin/gpureduce-cpu-bench" --threads 16 --rounds ${ROUNDS:-5} \
    --dtypes ${DTYPES:-float32,float16,bfloat16,int32,int64} --ops ${OPS:-sum,var,prod} \
    --layouts "$L" > $W/compare-$BASE.txt 2>&1
  echo "compare against $BASE rc $? at ${SECONDS}s" >> $W/host.txt
fi
tar czf $OUT/run.tgz -C $W --exclude='bench-*' .
cat $W/host.txt
