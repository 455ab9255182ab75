#!/usr/bin/env bash
# At HEAD: the GPU tests of measured placement and of the completion changes (the load test, the
# CUDA pipeline, the GPU server, CUDA shared memory) alone, and the Python shared-memory and
# socket suites against the CUDA server.
set -u
T0=$SECONDS
repo=$PWD
mkdir -p /tmp/p && tar xzf dist/gpureduce-*.tar.gz -C /tmp/p
pkg=$(ls -d /tmp/p/gpureduce-*/)
B=${pkg}bin
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; head -3 ${pkg}VERSION; nproc; } > $OUT/host.txt 2>&1
cat $OUT/host.txt
(cd $pkg && GPUREDUCE_TEST_BACKEND=cuda timeout 220 bin/gpureduce-tests \
  --gtest_filter='MeasuredPlacement*:LoadTest*:CudaPipeline*:GpuServerTest*:CudaSharedMemory*:PieceScheduler*:CompletionThread*' > $OUT/gpu-tests.txt 2>&1)
echo "gtest rc=$? t=$((SECONDS-T0))"; grep -E "^\[  (FAILED|PASSED|SKIPPED) |tests ran" $OUT/gpu-tests.txt | head
grep -h "requests of a message" $OUT/gpu-tests.txt | head -2
py=/opt/torch/.venv/bin/python; [ -x $py ] || py=python3
GPUREDUCE_SERVER_BINARY=${B}/gpureduce-server GPUREDUCE_PYTHON_DOC=docs/python.md GPUREDUCE_TEST_BACKEND=cuda \
  PYTHONPATH="$repo/build/package/python" timeout 180 $py -m pytest -q -p no:cacheprovider -rs \
  -k "shared_memory or local_socket" client/python/tests > $OUT/python-cuda.txt 2>&1
echo "pytest rc=$? t=$((SECONDS-T0))"; tail -n 2 $OUT/python-cuda.txt; grep -E "^FAILED" $OUT/python-cuda.txt | head
