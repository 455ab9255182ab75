#!/usr/bin/env bash
# Issue 22's device call E: Nsight Compute on the stats kernel at 16 MiB of float32, the first
# launches of the dtypes suite (SUM, MIN, ARGMIN, VAR, the five-op request), to see where the
# five-op request's fixed ~20 us goes. Output under $OUT.
set -u
mkdir -p /tmp/p && tar xzf dist/gpureduce-*.tar.gz -C /tmp/p
cd /tmp/p/gpureduce-*
nvidia-smi -L
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $ncu"
[ -n "$ncu" ] || exit 0
timeout 300 "$ncu" --kernel-name regex:Stats --launch-count 12 \
  --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
  --section SchedulerStats --section MemoryWorkloadAnalysis \
  bin/gpureduce-bench --suite dtypes --sizes 16777216 --runs 1 --warmup 0 \
  > "$OUT/ncu.txt" 2>&1
echo "ncu rc=$?"
grep -E "Stats|Duration|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Issued Ipc|No Eligible|Block Limit Registers|Grid Size" "$OUT/ncu.txt" | head -150
