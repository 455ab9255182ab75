#!/usr/bin/env bash
# Issue 13's acceptance on a host with two GPUs, from the package: one CUDA server owning GPUs 0
# and 1, loaded by gpureduce-load on the same host, every answer checked:
#   1. an array in system shared memory (16 GiB by default), each request pinned to GPU 0
#      (--device=0), then spread over both GPUs (the server's --split-above): GB/s and the ratio;
#   2. CUDA IPC: 1 GiB payloads in a region on GPU 0 only, then one region on each GPU, four
#      requests in flight (enough to keep either GPU busy): GB/s and the ratio;
#   3. over gRPC, 1 MiB unary requests on single_pass at concurrency 16: how many each GPU took;
#   4. one CLI stream of 1 GiB (--random --verify): spread over both GPUs, checked.
# Usage: scripts/multi_gpu_acceptance.sh [--bin DIR] [--out DIR] [--floats N] [--duration D]
set -uo pipefail
cd "$(dirname "$0")/.."
bin=bin out=multi-gpu floats=4294967296 duration=4s
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --floats) floats=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    *) echo "multi_gpu_acceptance: unknown argument $1" >&2; exit 2 ;;
  esac
done
find_bin() { find "$bin" -name "$1" -type f -perm -u+x | head -1; }
load=$(find_bin gpureduce-load) server=$(find_bin gpureduce-server) cli=$(find_bin gpureduce)
[ -n "$load" ] && [ -n "$server" ] && [ -n "$cli" ] || { echo "no binaries in $bin" >&2; exit 2; }
mkdir -p "$out"
# The object lives in /dev/shm (tmpfs): where it cannot hold the array, halve the array until it
# can, and say so.
shm_free=$(df --output=avail -B1 /dev/shm | tail -1)
while [ $((floats * 4 + (1 << 30))) -gt "$shm_free" ] && [ "$floats" -gt $((1 << 26)) ]; do
  floats=$((floats / 2))
  echo "multi_gpu_acceptance: /dev/shm has $((shm_free >> 20)) MiB free: $((floats * 4 >> 20)) MiB arrays"
done
"$server" --backend=cuda --devices=0,1 --allow-shared-memory --max-concurrent-requests=64 \
  --listen=127.0.0.1:0 --port-file="$out/port" >"$out/server.log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
for _ in $(seq 300); do [ -s "$out/port" ] && break; sleep 0.1; done
target="127.0.0.1:$(cat "$out/port")"
"$cli" health --target="$target" --wait=120s >/dev/null || { cat "$out/server.log"; exit 1; }
"$cli" info --target="$target" >"$out/info.txt" 2>&1

run() {
  local name=$1
  shift
  local t0=$(date +%s)
  "$load" --target="$target" --json="$out/$name.json" --no-progress --warmup=1s \
    --duration="$duration" "$@" >"$out/$name.txt" 2>&1
  echo "$name: rc=$? in $(( $(date +%s) - t0 )) s"
  grep -E "registered|answers:|devices:|latency:|server us|an error|a wrong" "$out/$name.txt"
}
run shm-one-gpu --shared-memory=system --floats="$floats" --payloads=1 --device=0 --concurrency=1
run shm-two-gpus --shared-memory=system --floats="$floats" --payloads=1 --concurrency=1
run ipc-one-gpu --shared-memory=cuda --shared-memory-devices=0 --floats=268435456 --payloads=2 \
  --concurrency=4
run ipc-two-gpus --shared-memory=cuda --shared-memory-devices=0,1 --floats=268435456 \
  --payloads=2 --concurrency=4
run grpc-1MiB --floats=262144 --kernel=single_pass --concurrency=16 --connections=4
"$cli" reduce --random 268435456 --verify --json --target="$target" >"$out/cli-stream.json" \
  2>"$out/cli-stream.err"
echo "cli stream: rc=$?"
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
def load(name):
    path = os.path.join(out, name + ".json")
    return json.load(open(path)) if os.path.exists(path) else None
for one, two in (("shm-one-gpu", "shm-two-gpus"), ("ipc-one-gpu", "ipc-two-gpus")):
    a, b = load(one), load(two)
    if a and b and a["gbps"] > 0:
        print(f"{one}: {a['gbps']:.1f} GB/s {a['devices']}; {two}: {b['gbps']:.1f} GB/s "
              f"{b['devices']}; ratio {b['gbps'] / a['gbps']:.2f}x; wrong {a['wrong']}+{b['wrong']}")
g = load("grpc-1MiB")
if g:
    print(f"grpc-1MiB: {g['rps']:.0f} rps, {g['gbps']:.2f} GB/s, by device {g['devices']}, "
          f"wrong {g['wrong']}, failed {g['failed']}")
try:
    c = json.load(open(os.path.join(out, "cli-stream.json")))
    print(f"cli stream: devices {c.get('device_indices')} ({c.get('device')}), "
          f"verify ok {c.get('verify', {}).get('ok')}, relative error {c.get('verify', {}).get('relative_error')}")
except Exception as e:
    print("cli stream: no JSON:", e)
PY
