#!/usr/bin/env bash
# Issue 22's device call A (nvidia-h100-x1), from the package: the GPU suite (all but
# LadderTest.EveryBoundedCellAtItsMaximum, whose kernels are unchanged). Everything under $OUT.
set -u
start=$(date +%s)
mkdir -p /tmp/p && tar xzf dist/gpureduce-*.tar.gz -C /tmp/p
repo=$PWD
cd /tmp/p/gpureduce-*
{ cat VERSION; nvidia-smi -L; nproc; uname -r; } > "$OUT/version.txt" 2>&1
cat "$OUT/version.txt"
t0=$(date +%s)
GPUREDUCE_TEST_BACKEND=cuda timeout 540 bin/gpureduce-tests \
  --gtest_filter='-LadderTest.EveryBoundedCellAtItsMaximum' > "$OUT/gpu-suite.txt" 2>&1
echo "GPU suite rc=$? in $(( $(date +%s) - t0 )) s"
grep -E "^\[  (FAILED|PASSED) |tests ran|SKIPPED \]" "$OUT/gpu-suite.txt" | head -30
grep -B2 -A12 "Failure" "$OUT/gpu-suite.txt" | head -60
echo "total $(( $(date +%s) - start )) s"
