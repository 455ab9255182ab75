#!/usr/bin/env bash
# The GPU tests of this session's changes at HEAD: the gtest suites they touch with the CUDA
# backend, and the Python shared-memory and socket suites against the CUDA server.
set -u
T0=$SECONDS
repo=$PWD
mkdir -p /tmp/p && tar xzf dist/gpureduce-*.tar.gz -C /tmp/p
pkg=$(ls -d /tmp/p/gpureduce-*/)
B=${pkg}bin
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; head -3 ${pkg}VERSION; nproc; } > $OUT/host.txt 2>&1
cat $OUT/host.txt
(cd $pkg && GPUREDUCE_TEST_BACKEND=cuda timeout 300 bin/gpureduce-tests \
  --gtest_filter='UnixSocket*:CudaSharedMemory*:*SharedMemory*:SplitSession*:Routing*:HostRates*:Devices*:CpuBackend*:StreamIdle*:*Idle*' > $OUT/gpu-tests.txt 2>&1)
echo "gtest rc=$? t=$((SECONDS-T0))"; grep -E "^\[  (FAILED|PASSED|SKIPPED) " $OUT/gpu-tests.txt | head
py=/opt/torch/.venv/bin/python; [ -x $py ] || py=python3
GPUREDUCE_SERVER_BINARY=${B}/gpureduce-server GPUREDUCE_PYTHON_DOC=docs/python.md GPUREDUCE_TEST_BACKEND=cuda \
  PYTHONPATH="$repo/build/package/python" timeout 200 $py -m pytest -q -p no:cacheprovider -rs \
  -k "shared_memory or local_socket" client/python/tests > $OUT/python-cuda.txt 2>&1
echo "pytest rc=$? t=$((SECONDS-T0))"; tail -n 2 $OUT/python-cuda.txt; grep -E "^FAILED" $OUT/python-cuda.txt | head
