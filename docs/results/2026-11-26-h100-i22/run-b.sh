#!/usr/bin/env bash
# Issue 22's device call B (nvidia-h100-x1), from the package: the dtypes bench (every dtype's
# SUM/MIN/ARGMIN, VAR and the five-op request beside float32 single_pass SUM and CUB), then the
# service end to end on the GPU (service.sh). Everything under $OUT.
set -u
start=$(date +%s)
mkdir -p /tmp/p && tar xzf dist/gpureduce-*.tar.gz -C /tmp/p
repo=$PWD
cd /tmp/p/gpureduce-*
{ cat VERSION; nvidia-smi -L; nproc; uname -r; } > "$OUT/version.txt" 2>&1
cat "$OUT/version.txt"
t0=$(date +%s)
timeout 120 bin/gpureduce-bench --suite dtypes --runs 50 --sizes 268435456,1073741824 \
  > "$OUT/bench-dtypes.md" 2> "$OUT/bench-dtypes.err"
echo "bench dtypes rc=$? in $(( $(date +%s) - t0 )) s"
cat "$OUT/bench-dtypes.md"
t0=$(date +%s)
bash "$repo/docs/results/2026-11-26-h100-i22/service.sh" > "$OUT/service.txt" 2>&1
echo "service rc=$? in $(( $(date +%s) - t0 )) s"
cat "$OUT/service.txt"
echo "total $(( $(date +%s) - start )) s"
