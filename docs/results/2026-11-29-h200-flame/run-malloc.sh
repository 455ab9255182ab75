#!/usr/bin/env bash
# Issue 24, item 1: does the servers' dearer recvmsg come from fresh pages? 8 streams of 256 MiB
# in 1 MiB chunks on 8 connections into the sink and the CPU server, each as it is and with
# glibc's malloc told to keep its memory (no trimming, no mmap below 64 MiB); the receiver's
# CPU ticks and minor page faults over each run; two rounds.
set -u
T0=$SECONDS
mkdir -p /tmp/p && tar xzf dist/gpureduce-*.tar.gz -C /tmp/p
pkg=$(ls -d /tmp/p/gpureduce-*/)
cd $pkg
keep="glibc.malloc.trim_threshold=4294967296:glibc.malloc.mmap_threshold=67108864:glibc.malloc.top_pad=268435456"
stat() { awk '{print $14+$15, $10}' /proc/$1/stat; }
for round in 1 2; do
  for who in sink cpu; do
    for malloc in plain keep; do
      rm -f /tmp/port
      tun=""; [ $malloc = keep ] && tun=$keep
      if [ $who = sink ]; then
        GLIBC_TUNABLES=$tun bin/gpureduce-load sink --listen=127.0.0.1:0 --port-file=/tmp/port > /tmp/r.log 2>&1 &
      else
        GLIBC_TUNABLES=$tun bin/gpureduce-server --backend=cpu --max-concurrent-requests=128 --listen=127.0.0.1:0 --port-file=/tmp/port > /tmp/r.log 2>&1 &
      fi
      pid=$!
      for _ in $(seq 300); do [ -s /tmp/port ] && break; sleep 0.1; done
      t=127.0.0.1:$(cat /tmp/port)
      [ $who != sink ] && bin/gpureduce health --target=$t --wait=60s > /dev/null
      sleep 0.3
      read c0 f0 < <(stat $pid)
      r=$(timeout 60 bin/gpureduce-load --target=$t --connections=8 --duration=5s --warmup=1s --bytes=256MiB --chunk-size=1MiB --concurrency=8 2>&1 | grep -E "answers:" | sed 's/  */ /g')
      read c1 f1 < <(stat $pid)
      echo "$round $who $malloc: $r | ticks $((c1 - c0)) minflt $((f1 - f0))" | tee -a $OUT/malloc.txt
      kill -TERM $pid; wait $pid 2>/dev/null
    done
  done
done
echo "t=$((SECONDS-T0))"
