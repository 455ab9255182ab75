#!/usr/bin/env bash
# The whole gtest suite with the CUDA backend in three shards at once (failures rerun alone),
# then the old server (1c42d2e, bin/gpureduce-server-1c42d2e, the package's lib/ by
# LD_LIBRARY_PATH) against this one in alternating rounds over their Unix sockets, c1: 64 MiB and
# 4 GiB by CUDA IPC, 1024 floats with single_pass forced, 256 MiB of system memory.
set -u
T0=$SECONDS
mkdir -p /tmp/p && tar xzf dist/gpureduce-*.tar.gz -C /tmp/p
pkg=$(ls -d /tmp/p/gpureduce-*/)
B=${pkg}bin
test -x $B/gpureduce-server-1c42d2e || { echo "no old server"; exit 1; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; head -3 ${pkg}VERSION; nproc; } > $OUT/host.txt 2>&1
cat $OUT/host.txt
for i in 0 1 2; do
  (cd $pkg && GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i GPUREDUCE_TEST_BACKEND=cuda timeout 330 \
    bin/gpureduce-tests --gtest_brief=1 > $OUT/gpu-suite-$i.txt 2>&1; echo "shard $i rc=$?" >> $OUT/shards.txt) &
done
wait
cat $OUT/shards.txt; echo "suite t=$((SECONDS-T0))"
grep -h "tests ran\|PASSED\|SKIPPED  \] [0-9]\|^\[  FAILED  \] [A-Za-z]" $OUT/gpu-suite-*.txt | head -30
failed=$(grep -h "^\[  FAILED  \] [A-Za-z]" $OUT/gpu-suite-*.txt | awk '{print $4}' | sort -u | paste -sd: -)
if [ -n "$failed" ]; then
  (cd $pkg && GPUREDUCE_TEST_BACKEND=cuda timeout 150 bin/gpureduce-tests --gtest_filter="$failed" > $OUT/gpu-rerun.txt 2>&1; echo "rerun rc=$?")
  grep -E "^\[  (FAILED|PASSED) " $OUT/gpu-rerun.txt | head
fi
echo "rerun t=$((SECONDS-T0))"
# A shard cut by its timeout may leave its servers running: none may share the GPU below.
pkill -f "bin/gpureduce" ; sleep 1; pkill -9 -f "bin/gpureduce"; nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader
for v in new:50051:gpureduce-server old:50061:gpureduce-server-1c42d2e; do
  IFS=: read name port binary <<< "$v"
  rm -f /tmp/$name.sock
  LD_LIBRARY_PATH=${pkg}lib $B/$binary --backend cuda --listen 127.0.0.1:$port --listen-unix /tmp/$name.sock --allow-shared-memory --shared-memory-max-bytes=64GiB > $OUT/server-$name.log 2>&1 &
done
for port in 50051 50061; do for i in $(seq 150); do $B/gpureduce health --target 127.0.0.1:$port > /dev/null 2>&1 && break; sleep 0.2; done; done
mkdir -p $OUT/ab
L() {
  local name=$1; shift
  timeout 60 $B/gpureduce-load "$@" --json=$OUT/ab/$name.json > $OUT/ab/$name.txt 2>&1
  echo "== $name rc=$? $*" >> $OUT/summary.txt
  grep -E "answered by|latency:|server us" $OUT/ab/$name.txt >> $OUT/summary.txt
}
for round in 1 2 3; do
  for name in old new; do
    S=unix:/tmp/$name.sock
    L ipc64-$name-$round --target $S --shared-memory=cuda --floats 16777216 --requests 3000 --warmup 0.5s --duration 0
    L single1k-$name-$round --target $S --floats 1024 --kernel single_pass --duration 2s --warmup 0.5s
    L ipc4g-$name-$round --target $S --shared-memory=cuda --floats 1073741824 --payloads 1 --requests 100 --warmup 0.5s --duration 0
    L shm256-$name-$round --target $S --shared-memory --floats 67108864 --payloads 1 --requests 40 --warmup 0.5s --duration 0
  done
  echo "round $round t=$((SECONDS-T0))"
done
kill $(jobs -p) 2>/dev/null; wait
python3 - $OUT > $OUT/ab-table.txt <<'PY'
import json, glob, os, sys, collections
rows = collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1] + "/ab/*.json")):
    case, who, rnd = os.path.basename(f)[:-5].rsplit("-", 2)
    r = json.load(open(f))
    s = r["server_us"]
    rows[(case, who)].append((r["latency_ms"]["p50"] * 1e3, s["server"]["p50"], s["kernel"]["p50"]))
for (case, who), v in sorted(rows.items()):
    print(case, who, " | ".join(f"client {c:.1f} server {s:.1f} kernel {k:.1f} (+{s-k:.1f})" for c, s, k in v))
PY
cat $OUT/ab-table.txt
grep -c "rc=0" $OUT/summary.txt
cd $OUT && tar czf ab.tgz --remove-files ab server-*.log && echo "total t=$((SECONDS-T0))"
