#!/usr/bin/env bash
# The GPU acceptance run, from an unpacked package on a machine with only the NVIDIA driver:
#   1. the whole test suite with the CPU backend, then again with the CUDA backend (the GPU suite),
#   2. streaming throughput through the server, CUDA backend vs CPU backend, same client, run by
#      run alternating between the two,
#   3. a 4 GiB stream reduced through the CUDA server and checked against the client's float64 sum,
#   4. the server's resident and GPU memory across 100 consecutive requests.
# Usage (from the package root): scripts/gpu_acceptance.sh [RESULTS_DIR]   (default: $OUT or results)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-results}}
mkdir -p "$out"
summary="$out/summary.md"
log="$out/log.txt"
exec > >(tee -a "$log") 2>&1

echo "# gpureduce GPU acceptance, $(date -u +%Y-%m-%dT%H:%MZ)" | tee "$summary"
cat VERSION 2>/dev/null | sed 's/^/    /' | tee -a "$summary"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory --format=csv |
  sed 's/^/    /' | tee -a "$summary"

status=0
for backend in cpu cuda; do
  echo "## tests, GPUREDUCE_TEST_BACKEND=$backend" | tee -a "$summary"
  GPUREDUCE_TEST_BACKEND=$backend bin/gpureduce-tests --gtest_brief=1 \
    --gtest_output="xml:$out/tests-$backend.xml" > "$out/tests-$backend.txt" 2>&1
  rc=$?
  [ $rc -ne 0 ] && status=1
  tail -n 25 "$out/tests-$backend.txt"
  python3 - "$out/tests-$backend.xml" "$rc" <<'PY' | tee -a "$summary"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
t, f, s = int(root.get("tests")), int(root.get("failures")), int(root.get("disabled", 0))
skipped = sum(1 for c in root.iter("testcase") if c.find("skipped") is not None)
print(f"    exit {sys.argv[2]}: {t} tests, {f} failed, {skipped} skipped")
for c in root.iter("testcase"):
    if c.find("failure") is not None:
        print(f"    FAILED {c.get('classname')}.{c.get('name')}")
PY
done

source scripts/local_server.sh
server_start() {  # $1 backend; sets pid and target
  start_local_server "$1" bin/gpureduce-server bin/gpureduce "$out"
  pid=$server_pid target=$server_target
}
server_stop() { kill -TERM "$pid"; wait "$pid"; }

echo "## stream throughput, 1 MiB chunks, 400 MB per run, CUDA and CPU servers alternating" |
  tee -a "$summary"
scripts/compare_stream.sh --bin bin --chunk 1MiB --rounds 25 | tee -a "$summary"

echo "## 4 GiB stream through the CUDA server" | tee -a "$summary"
server_start cuda
bin/gpureduce reduce --random 1073741824 --seed 42 --op sum --chunk-size=4MiB --verify \
  --target="$target" | sed 's/^/    /' | tee -a "$summary"

echo "## memory across 100 consecutive requests (CUDA server)" | tee -a "$summary"
rss() { awk '/VmRSS/ {print $2}' /proc/$pid/status; }
gpu_mem() { nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits |
  awk -F', ' -v p="$pid" '$1 == p {print $2}'; }
bin/gpureduce reduce --random 10000000 --target="$target" >/dev/null
rss_before=$(rss); gpu_before=$(gpu_mem)
for i in $(seq 100); do
  ops=(sum prod min max mean sum_squares argmin argmax)
  bin/gpureduce reduce --random 10000000 --seed "$i" --op "${ops[$((i % 8))]}" \
    --target="$target" >/dev/null || { echo "request $i failed"; status=1; }
done
rss_after=$(rss); gpu_after=$(gpu_mem)
echo "    server VmRSS: ${rss_before} kB before, ${rss_after} kB after 100 requests" | tee -a "$summary"
echo "    server GPU memory (nvidia-smi): ${gpu_before} MiB before, ${gpu_after} MiB after" | tee -a "$summary"
server_stop

echo "exit status: $status" | tee -a "$summary"
exit $status
