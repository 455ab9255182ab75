#!/usr/bin/env bash
# Window experiment: 8 and 32 streams of 256 MiB in 1 MiB chunks into the sink, the CPU server and
# the CUDA server, at stream windows 64K..4M; BDP probe for reference; a profile of the best.
set -u
T0=$SECONDS
tar xzf dist/prof.tar.gz -C /tmp
mkdir -p /tmp/p && tar xzf dist/gpureduce-*.tar.gz -C /tmp/p
pkg=$(ls -d /tmp/p/gpureduce-*/)
cd $pkg
nproc > $OUT/host.txt; nvidia-smi --query-gpu=name,driver_version --format=csv >> $OUT/host.txt
pre=/tmp/prof/libprofiler.so.0:/tmp/prof/libunwind.so.8
load() { timeout 40 bin/gpureduce-load --target=$1 --bytes=256MiB --chunk-size=1MiB --concurrency=$2 --connections=8 --duration=3s --warmup=1s; }
start() { # $1 name, rest: command
  local name=$1; shift; rm -f /tmp/port
  "$@" --listen=127.0.0.1:0 --port-file=/tmp/port > $OUT/log-$name.txt 2>&1 & pid=$!
  for _ in $(seq 600); do [ -s /tmp/port ] && break; sleep 0.1; done
  env -u LD_PRELOAD -u CPUPROFILE bin/gpureduce health --target=127.0.0.1:$(cat /tmp/port) --wait=60s > /dev/null
}
stop() { kill -TERM $pid; wait $pid; }
row() { # name streams
  local f=$OUT/r-$1-c$2.txt
  c0=$(awk '{print $14+$15}' /proc/$pid/stat)
  load 127.0.0.1:$(cat /tmp/port) $2 > $f 2>&1
  c1=$(awk '{print $14+$15}' /proc/$pid/stat)
  echo "$1 c$2: $(grep -oE '[0-9.]+ GB/s' $f | head -1) cpu_ticks=$((c1-c0)) t=$((SECONDS-T0))" | tee -a $OUT/summary.txt
}
for w in 64KiB 256KiB 1MiB 4MiB; do
  for kind in sink cpu cuda; do
    if [ $kind = sink ]; then start sink-$w bin/gpureduce-load sink --stream-window=$w
    else start $kind-$w bin/gpureduce-server --backend=$kind --stream-window=$w; fi
    row $kind-$w 8; row $kind-$w 32
    stop
  done
done
for kind in sink cpu cuda; do
  if [ $kind = sink ]; then start sink-bdp bin/gpureduce-load sink --bdp-probe
  else start $kind-bdp bin/gpureduce-server --backend=$kind --bdp-probe; fi
  row $kind-bdp 8; row $kind-bdp 32
  stop
done
# Second round of the 1 MiB and 4 MiB windows (the interleaving repeats).
for w in 1MiB 4MiB 64KiB; do
  for kind in sink cpu cuda; do
    if [ $kind = sink ]; then start sink-$w-b bin/gpureduce-load sink --stream-window=$w
    else start $kind-$w-b bin/gpureduce-server --backend=$kind --stream-window=$w; fi
    row $kind-$w-b 8; row $kind-$w-b 32
    stop
  done
done
# Profiles of 8 streams at 1 MiB windows.
for kind in sink cuda; do
  if [ $kind = sink ]; then
    LD_PRELOAD=$pre CPUPROFILE=$OUT/prof-sink.prof CPUPROFILE_FREQUENCY=500 start sinkprof bin/gpureduce-load sink --stream-window=1MiB
  else
    LD_PRELOAD=$pre CPUPROFILE=$OUT/prof-cuda.prof CPUPROFILE_FREQUENCY=500 start cudaprof bin/gpureduce-server --backend=cuda --stream-window=1MiB
  fi
  row $kind-prof 8
  stop
done
echo "t=$((SECONDS-T0))" >> $OUT/summary.txt
cd $OUT && tar czf all.tgz --remove-files r-*.txt log-*.txt *.prof host.txt
