#!/bin/bash
# Issue 23, nineteenth session. On one H200 host from the package (its AVX-512 CPU; no GPU work):
# (1) the kernels' and the runtime's array tests (every copy of the short runs pass's answers
# against the Stats'); (2) the CPU bench, the baseline's (BASE, dist/old-bench) against the
# package's, 16 threads, ROUNDS alternating rounds, each cell beside the whole array's float32
# SUM; (3) where dist/new-bench holds an intermediate bench (MID): one thread, rows and segments
# of 16, the baseline, MID and the package's, 3 rounds. The package may be a slim one (bin/ with
# the tests and the CPU bench, lib/): the tests that start a server are left out. Everything
# lands in $OUT/run.tgz. `run.sh tests`: (1) alone.
set -u
BASE=${BASE:-abafa13}; MID=${MID:-prefetch}
W=/tmp/w; mkdir -p $W
P=$(ls dist/gpureduce-*.tar.*); tar xf "$P" -C /tmp; D=/tmp/$(basename "$P" | sed "s/\.tar\..*//")
xz -dkc dist/old-bench/gpureduce-cpu-bench-$BASE.xz > $W/bench-$BASE; chmod +x $W/bench-$BASE
{ grep commit "$D/VERSION"; uptime; lscpu | grep -E "Model name|^CPU\(s\)"; } > $W/host.txt 2>&1
F='*Product*:*RunsPass*:*RunsAnswers*:*ColumnPass*:*ColumnsReduce*:*RowsReduce*:*SegmentedReduce*:*ParallelReduce*:*ShapedSession*:*CpuReduce*:*ArrayResults*:-*ArrayApi*'
timeout 240 "$D/bin/gpureduce-tests" --gtest_filter="$F" > $W/tests.txt 2>&1
echo "cpu tests rc $? at ${SECONDS}s" >> $W/host.txt
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|tests? from .* ran|Failure|differ" $W/tests.txt | head -60 > $W/tests-summary.txt
grep -E "^\[ +(OK|FAILED|SKIPPED) " $W/tests.txt > $W/tests-lines.txt; rm -f $W/tests.txt
if [ "${1:-}" != tests ]; then
  L=${LAYOUTS:-"whole,rows 16,rows 32,rows 64,segment 16,segment 128"}
  timeout 300 python3 scripts/cpu_bench_compare.py --baseline $W/bench-$BASE \
    --candidate "$D/bin/gpureduce-cpu-bench" --threads 16 --rounds ${ROUNDS:-5} \
    --dtypes ${DTYPES:-float32,float16,bfloat16,int32,int64} --ops ${OPS:-sum,var,prod} \
    --layouts "$L" > $W/compare.txt 2>&1
  echo "compare rc $? at ${SECONDS}s" >> $W/host.txt
  if [ -f dist/new-bench/gpureduce-cpu-bench-$MID.xz ]; then
    xz -dkc dist/new-bench/gpureduce-cpu-bench-$MID.xz > $W/bench-$MID; chmod +x $W/bench-$MID
    for round in 1 2 3; do for b in $BASE $MID package; do
      B=$W/bench-$b; [ $b = package ] && B=$D/bin/gpureduce-cpu-bench
      for lay in --rows=16 --segment=16; do
        echo "## $b round $round layout $lay" >> $W/one-thread.txt
        timeout 60 $B --threads=1 --bytes=64MiB --runs=7 --dtypes=float32,float16,bfloat16 \
          --ops=sum,var,prod $lay >> $W/one-thread.txt 2>&1
      done
    done; done
    echo "one thread done at ${SECONDS}s" >> $W/host.txt
  fi
fi
tar czf $OUT/run.tgz -C $W --exclude='bench-*' .
cat $W/host.txt
