#!/usr/bin/env bash
# At HEAD (3cbc829, the review's mends): the GPU tests of the completions and of placement.
set -u
T0=$SECONDS
mkdir -p /tmp/p && tar xzf dist/gpureduce-*.tar.gz -C /tmp/p
pkg=$(ls -d /tmp/p/gpureduce-*/)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; head -3 ${pkg}VERSION; nproc; } > $OUT/host.txt 2>&1
cat $OUT/host.txt
(cd $pkg && GPUREDUCE_TEST_BACKEND=cuda timeout 150 bin/gpureduce-tests \
  --gtest_filter='MeasuredPlacement*:LoadTest*:CudaPipeline*:GpuServerTest*:CudaSharedMemory*:PieceScheduler*:CompletionThread*:*SharedMemory*:HostRates*:Routing*' > $OUT/gpu-tests.txt 2>&1)
echo "gtest rc=$? t=$((SECONDS-T0))"; grep -E "^\[  (FAILED|PASSED|SKIPPED) |tests ran" $OUT/gpu-tests.txt | head
grep -v "^\[20" $OUT/gpu-tests.txt > $OUT/gpu-tests-brief.txt; rm $OUT/gpu-tests.txt
