#!/usr/bin/env bash
# Issue 23's GPU array path (--gpu-arrays) on a GPU host, from an unpacked package, in one call:
#   1. the runtime's array tests on the CUDA backend (EveryBackendAndDType/ShapedSessionTest.*Cuda*:
#      every op and dtype, axes, segments, pieces cut anywhere, against the float64 reference)
#      and the array kernels' own (SegmentedStatsTest), then compute-sanitizer's memcheck and
#      racecheck over two dtypes of the first;
#   2. the Python axes and results-into-shared-memory suites against a CUDA server that runs
#      every request on its GPU (--gpu-arrays --auto-cpu-below=0);
#   3. array requests through gpureduce-load on that server, GPU array kernels (single_pass)
#      against the CPU's (cpu) in the same run, each beside the whole array's request;
#   4. small requests batched (--batch-small-requests) against not, at concurrency 64, with a
#      heavy stream beside them.
# Usage (from the package root, with the repository's client/python beside it):
#   scripts/gpu_arrays_check.sh RESULTS_DIR REPO_DIR PYTHONPATH
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-results}} repo=${2:-.} pythonpath=${3:-}
mkdir -p "$out"
T0=$SECONDS
log() { echo "$* (t=$((SECONDS - T0)) s)" | tee -a "$out/summary.txt"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat VERSION; } >"$out/summary.txt" 2>&1

GPUREDUCE_TEST_BACKEND=cuda timeout 300 bin/gpureduce-tests \
  --gtest_filter='*ShapedSession*Cuda*:*SegmentedStats*:*BatchedSession*' >"$out/shaped-cuda.txt" 2>&1
log "shaped sessions on the GPU: rc=$?"
grep -E "^\[  (PASSED|FAILED) |SKIPPED \] [0-9]" "$out/shaped-cuda.txt" | tee -a "$out/summary.txt"
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool bin/gpureduce-tests \
    --gtest_filter='*ShapedSession*Cudafloat16:*ShapedSession*Cudaint64' >"$out/$tool.txt" 2>&1
  log "$tool: rc=$?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) " "$out/$tool.txt" | tee -a "$out/summary.txt"
done

GPUREDUCE_SERVER_BINARY=$PWD/bin/gpureduce-server GPUREDUCE_TEST_BACKEND=cuda \
  GPUREDUCE_TEST_SERVER_FLAGS="--gpu-arrays --auto-cpu-below=0" PYTHONPATH="$pythonpath" \
  timeout 400 python3 -m pytest -q -p no:cacheprovider -rs \
  "$repo/client/python/tests/test_axes.py" "$repo/client/python/tests/test_array_output.py" \
  >"$out/python-arrays.txt" 2>&1
log "python arrays on the GPU: rc=$?"
tail -n 3 "$out/python-arrays.txt" | tee -a "$out/summary.txt"

source scripts/local_server.sh
start_local_server cuda bin/gpureduce-server bin/gpureduce "$out" --gpu-arrays --auto-cpu-below=0
for kernel in single_pass cpu; do
  for shape in "" "--shape 1024,1024 --axis 1" "--shape 1024,1024 --axis 0" \
               "--shape 65536,16 --axis 1" "--segments 4096"; do
    echo "== $kernel ${shape:-whole}" >>"$out/load.txt"
    timeout 60 bin/gpureduce-load --target="$server_target" --kernel=$kernel --dtype=float32 \
      --concurrency=4 --duration=3s --floats 1048576 $shape >>"$out/load.txt" 2>&1
    log "load $kernel $shape: rc=$?"
  done
done
kill -TERM "$server_pid"; wait "$server_pid"
grep -E "^== |GB/s|errors" "$out/load.txt" | head -60 >>"$out/summary.txt"

# 4. Small requests batched (--batch-small-requests, its defaults) against not, alternating, 3
#    rounds: 1,024 floats on single_pass at concurrency 64 with a heavy stream beside them (the
#    server's kernel time per request in the responses, the batches in its metrics), then the
#    same requests open loop at a fixed 40,000/s, where the rate is equal and the latency and
#    GPU time compare alone.
for round in 1 2 3; do
  for batching in off on; do
    # As scripts/measure_load.sh's c64 cells: 64 in flight from one address.
    flags=(--metrics-listen=127.0.0.1:0 --max-concurrent-requests=128)
    [ $batching = on ] && flags+=(--batch-small-requests)
    start_local_server cuda bin/gpureduce-server bin/gpureduce "$out" "${flags[@]}"
    echo "== batching $batching, round $round" >>"$out/batching.txt"
    # A heavy stream beside the small requests: its rate must not drop with batching.
    timeout 60 bin/gpureduce-load --target="$server_target" --kernel=single_pass --bytes 256MiB \
      --concurrency=1 --duration=5s >"$out/heavy-$batching-$round.txt" 2>&1 &
    heavy=$!
    timeout 60 bin/gpureduce-load --target="$server_target" --kernel=single_pass --floats 1024 \
      --concurrency=64 --connections=4 --duration=5s >>"$out/batching.txt" 2>&1
    log "batching $batching round $round: rc=$?"
    wait $heavy
    { echo "heavy stream beside:"; grep -E "answers|GB/s" "$out/heavy-$batching-$round.txt"; } >>"$out/batching.txt"
    port=$(grep -oE "metrics on [^ ]*:[0-9]+" "$out/server-cuda.log" | grep -oE "[0-9]+$" | head -1)
    metrics() {
      [ -n "$port" ] && python3 -c "import urllib.request; print(''.join(l for l in urllib.request.urlopen('http://127.0.0.1:$port/metrics').read().decode().splitlines(True) if 'batch' in l and not l.startswith('#')))" >>"$out/batching.txt" 2>&1
    }
    metrics
    echo "== open loop 40000/s, batching $batching, round $round" >>"$out/batching.txt"
    timeout 60 bin/gpureduce-load --target="$server_target" --kernel=single_pass --floats 1024 \
      --rate=40000 --connections=4 --duration=5s >>"$out/batching.txt" 2>&1
    log "open loop batching $batching round $round: rc=$?"
    metrics
    kill -TERM "$server_pid"; wait "$server_pid"
  done
done
grep -E "^== |rps|latency|server us|batch|heavy" "$out/batching.txt" | grep -v "^gpureduce-load" >>"$out/summary.txt"
log "done"
