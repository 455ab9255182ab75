#!/usr/bin/env bash
# Issue 24, item 1: 8 streams of 256 MiB in 1 MiB chunks (and 32 of 64 MiB) into the bare sink,
# the CPU server and the CUDA server (its `auto`, and the GPU forced), each on 8 connections;
# every receiver profiled by gperftools (LD_PRELOAD, 500 Hz) in a second run beside an
# unprofiled first; each process's CPU time over the run. Brings back the host's libc.
set -u
T0=$SECONDS
tar xzf dist/prof.tar.gz -C /tmp
mkdir -p /tmp/p && tar xzf dist/gpureduce-*.tar.gz -C /tmp/p
pkg=$(ls -d /tmp/p/gpureduce-*/)
cp -L /lib/x86_64-linux-gnu/libc.so.6 $OUT/libc.so.6
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; head -3 ${pkg}VERSION; nproc; lscpu | grep -E "Model name|Thread|Core|Socket|L3"; } > $OUT/host.txt 2>&1
cat $OUT/host.txt
cd $pkg
pre=/tmp/prof/libprofiler.so.0:/tmp/prof/libunwind.so.8
mkdir -p $OUT/runs
ticks() { awk '{print $14+$15}' /proc/$1/stat; }
load() {  # name target args...
  local name=$1 target=$2; shift 2
  local start=$(date +%s.%N)
  ( TIMEFORMAT="client CPU %U user %S sys, %R s"; time timeout 60 bin/gpureduce-load --target=$target --connections=8 --duration=5s --warmup=1s "$@" ) > $OUT/runs/$name.txt 2>&1
}
start_recv() {  # name profiled(0/1) command...
  local name=$1 prof=$2; shift 2
  rm -f /tmp/port
  if [ $prof = 1 ]; then
    LD_PRELOAD=$pre CPUPROFILE=$OUT/runs/$name.prof CPUPROFILE_FREQUENCY=500 "$@" > /tmp/$name.log 2>&1 &
  else
    "$@" > /tmp/$name.log 2>&1 &
  fi
  pid=$!
  for _ in $(seq 300); do [ -s /tmp/port ] && break; sleep 0.1; done
  sleep 0.5
}
for round in plain prof; do
  p=0; [ $round = prof ] && p=1
  for who in sink cpu cuda; do
    case $who in
      sink) start_recv $who-$round $p bin/gpureduce-load sink --listen=127.0.0.1:0 --port-file=/tmp/port ;;
      cpu) start_recv $who-$round $p bin/gpureduce-server --backend=cpu --max-concurrent-requests=128 --listen=127.0.0.1:0 --port-file=/tmp/port ;;
      cuda) start_recv $who-$round $p bin/gpureduce-server --backend=cuda --max-concurrent-requests=128 --listen=127.0.0.1:0 --port-file=/tmp/port ;;
    esac
    t=127.0.0.1:$(cat /tmp/port)
    [ $who != sink ] && bin/gpureduce health --target=$t --wait=60s > /dev/null
    c0=$(ticks $pid)
    load s8-$who-$round $t --bytes=256MiB --chunk-size=1MiB --concurrency=8
    c1=$(ticks $pid); echo "receiver CPU $((c1 - c0)) ticks" >> $OUT/runs/s8-$who-$round.txt
    if [ $who = cuda ]; then
      load s8-gpu-$round $t --bytes=256MiB --chunk-size=1MiB --concurrency=8 --kernel=single_pass
      c2=$(ticks $pid); echo "receiver CPU $((c2 - c1)) ticks" >> $OUT/runs/s8-gpu-$round.txt
    fi
    if [ $round = plain ] && [ $who != cuda ]; then
      load s32-$who-$round $t --bytes=64MiB --chunk-size=1MiB --concurrency=32
    fi
    kill -TERM $pid; wait $pid 2>/dev/null
  done
  echo "$round t=$((SECONDS-T0))"
done
for f in $OUT/runs/*.txt; do echo "== $(basename $f .txt): $(grep -E "answers:" $f | sed 's/  */ /g') | $(grep -E "client CPU|receiver CPU" $f | tr '\n' ' ')"; done | tee $OUT/summary.txt
ls -la $OUT/runs/*.prof
cd $OUT && tar czf runs.tgz --remove-files runs && echo "total t=$((SECONDS-T0))"
