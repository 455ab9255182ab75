#!/usr/bin/env bash
# Issue 24's table again, from the package, in one call: the GPU tests of measured placement
# (and the suites it touches), the host's read probe, scripts/measure_load.sh's goals (sink, CUDA
# server, CPU server alternating; 8 and 32 streams, unary c1/c64) and the unary crossover with the
# CUDA server's measured `auto` beside the forced GPU and the CPU server; system shared memory from
# 1 MiB to 4 GiB by the measured `auto`, the GPU alone and the CPU server; CUDA IPC of 64 MiB and
# 4 GiB over the Unix socket. Everything under $OUT; summary.txt holds the lines the docs cite.
set -u
T0=$SECONDS
mkdir -p /tmp/p && tar xzf dist/gpureduce-*.tar.gz -C /tmp/p
pkg=$(ls -d /tmp/p/gpureduce-*/)
B=${pkg}bin
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; head -3 ${pkg}VERSION; nproc; free -g | head -2; } > $OUT/host.txt 2>&1
cat $OUT/host.txt
(cd $pkg && GPUREDUCE_TEST_BACKEND=cuda timeout 170 bin/gpureduce-tests \
  --gtest_filter='MeasuredPlacement*:GpuServerTest.SizeAware*:Routing*:HostRates*:Place*:PathCost*:*SharedMemory*:SplitSession*:CpuKernel*' > $OUT/gpu-tests.txt 2>&1)
echo "gtest rc=$? t=$((SECONDS-T0))"; grep -E "^\[  (FAILED|PASSED|SKIPPED) " $OUT/gpu-tests.txt | head
grep -h "requests of a message\|requests of system shared" $OUT/gpu-tests.txt | head -3
$B/gpureduce-bench --suite host-read --runs 20 > $OUT/host-read.txt 2>&1; tail -1 $OUT/host-read.txt
echo "host-read t=$((SECONDS-T0))"
# The goals of scripts/measure_load.sh, then the crossover of the three (its sweeps' last part).
timeout 260 scripts/measure_load.sh --bin $B --out $OUT/load --rounds 2 --duration 2s --no-sweeps > $OUT/load-summary.md 2> $OUT/load-progress.txt
echo "measure_load rc=$? t=$((SECONDS-T0))"
start() {  # NAME PORT FLAGS...
  local name=$1 port=$2; shift 2
  $B/gpureduce-server --listen 127.0.0.1:$port --allow-shared-memory --shared-memory-max-bytes=64GiB --max-request-bytes=64MiB "$@" > $OUT/server-$name.log 2>&1 &
  for i in $(seq 150); do $B/gpureduce health --target 127.0.0.1:$port > /dev/null 2>&1 && break; sleep 0.2; done
}
start auto 50051 --backend cuda --listen-unix /tmp/g.sock
start off 50052 --backend cuda --host-region-split=off
start cpu 50054 --backend cpu
grep -h "requests of a message\|requests of system shared" $OUT/server-auto.log | tee -a $OUT/summary.txt
mkdir -p $OUT/runs
L() {
  local name=$1; shift
  timeout 100 $B/gpureduce-load "$@" --json=$OUT/runs/$name.json > $OUT/runs/$name.txt 2>&1
  echo "== $name rc=$? $*" >> $OUT/summary.txt
  grep -E "answered by|answers:|latency:|server us" $OUT/runs/$name.txt >> $OUT/summary.txt
}
for e in 10 14 18 20 22 24; do
  for who in auto:50051:auto gpu:50051:single_pass cpu:50054:auto; do
    IFS=: read name port kernel <<< "$who"
    L cross-2^$e-$name --target 127.0.0.1:$port --kernel $kernel --floats $((1 << e)) --concurrency 1 --duration 1s --warmup 300ms
  done
done
echo "crossover t=$((SECONDS-T0))"
for size in 1MiB:262144:400 16MiB:4194304:200 256MiB:67108864:40 4GiB:1073741824:20; do
  IFS=: read label floats requests <<< "$size"
  for who in auto:50051 off:50052 cpu:50054; do
    IFS=: read name port <<< "$who"
    L shm-$label-$name --target 127.0.0.1:$port --shared-memory --floats $floats --payloads 1 --requests $requests --warmup 1s --duration 0
  done
done
echo "shm t=$((SECONDS-T0))"
$B/gpureduce-bench --suite host-read --runs 20 >> $OUT/host-read.txt 2>&1; tail -1 $OUT/host-read.txt
for round in 1 2; do
  L ipc64-$round --target unix:/tmp/g.sock --shared-memory=cuda --floats 16777216 --requests 3000 --warmup 0.5s --duration 0
  L ipc4g-$round --target unix:/tmp/g.sock --shared-memory=cuda --floats 1073741824 --payloads 1 --requests 200 --warmup 0.5s --duration 0
done
echo "ipc t=$((SECONDS-T0))"
grep -h "host regions" $OUT/server-auto.log | tail -3 >> $OUT/summary.txt
kill $(jobs -p); wait
cat $OUT/load-summary.md | head -60
grep -E "^== |answered by|latency|server us" $OUT/summary.txt | head -150
echo "total t=$((SECONDS-T0))"
