#!/usr/bin/env bash
# GPU tests of this session's changes; then the per-request stages of a CUDA server (XP_TRACE)
# with the completion thread as it is and with finer polling (XP_POLL), over the Unix socket.
set -u
T0=$SECONDS
repo=$PWD
mkdir -p /tmp/p && tar xzf dist/gpureduce-*.tar.gz -C /tmp/p
pkg=$(ls -d /tmp/p/gpureduce-*/)
B=${pkg}bin
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; cat ${pkg}VERSION; nproc; } > $OUT/host.txt 2>&1
cat $OUT/host.txt
(cd $pkg && GPUREDUCE_TEST_BACKEND=cuda timeout 240 bin/gpureduce-tests \
  --gtest_filter='UnixSocket*:CudaSharedMemory*:*SharedMemory*:SplitSession*:Routing*:HostRates*:Devices*:CpuBackend*' > $OUT/gpu-tests.txt 2>&1)
echo "gtest rc=$? t=$((SECONDS-T0))"; grep -E "^\[  (FAILED|PASSED) |SKIPPED \] [0-9]|^\[  FAILED  \]" $OUT/gpu-tests.txt | head
py=/opt/torch/.venv/bin/python; [ -x $py ] || py=python3
GPUREDUCE_SERVER_BINARY=${B}/gpureduce-server GPUREDUCE_PYTHON_DOC=docs/python.md GPUREDUCE_TEST_BACKEND=cuda \
  PYTHONPATH="$repo/build/package/python" timeout 150 $py -m pytest -q -p no:cacheprovider -rs \
  -k "shared_memory or local_socket" client/python/tests > $OUT/python-cuda.txt 2>&1
echo "pytest rc=$? t=$((SECONDS-T0))"; tail -n 2 $OUT/python-cuda.txt; grep -E "^FAILED" $OUT/python-cuda.txt | head
mkdir -p $OUT/load
$B/gpureduce-load sink --listen 127.0.0.1:50052 --listen-unix /tmp/s.sock > $OUT/sink.log 2>&1 &
sinkpid=$!
L() {
  local name=$1; shift
  timeout 100 $B/gpureduce-load "$@" --json=$OUT/load/$name.json > $OUT/load/$name.txt 2>&1
  echo "== $name rc=$? $*" >> $OUT/summary.txt
  grep -E "answers:|latency:|server us" $OUT/load/$name.txt >> $OUT/summary.txt
}
for round in 1 2; do
  for mode in base poll; do
    rm -f /tmp/g.sock
    if [ $mode = poll ]; then export XP_POLL=1; else unset XP_POLL; fi
    XP_TRACE=1 $B/gpureduce-server --backend cuda --listen 127.0.0.1:50051 --listen-unix /tmp/g.sock --allow-shared-memory > $OUT/server-$mode-$round.log 2>&1 &
    spid=$!
    for i in $(seq 150); do $B/gpureduce health --target 127.0.0.1:50051 > /dev/null 2>&1 && break; sleep 0.2; done
    S=unix:/tmp/g.sock
    for c in ipc64 ipc4g single1k unary1k; do
      echo "== MARK $c" >&2
      echo "MARK $c" >> $OUT/server-$mode-$round.log
      case $c in
        ipc64) L $c-$mode-$round --target $S --shared-memory=cuda --floats 16777216 --requests 3000 --warmup 0.5s --duration 0 ;;
        ipc4g) L $c-$mode-$round --target $S --shared-memory=cuda --floats 1073741824 --payloads 1 --requests 200 --warmup 0.5s --duration 0 ;;
        single1k) L $c-$mode-$round --target $S --floats 1024 --kernel single_pass --duration 3s --warmup 0.5s ;;
        unary1k) L $c-$mode-$round --target $S --floats 1024 --duration 3s --warmup 0.5s ;;
      esac
    done
    kill $spid; wait $spid
    L sink1k-$round --target unix:/tmp/s.sock --floats 1024 --duration 3s --warmup 0.5s
    echo "$mode $round t=$((SECONDS-T0))"
  done
done
kill $sinkpid; wait
python3 - "$OUT" > $OUT/stages.txt <<'PY'
import sys, glob, statistics, re, os
out = sys.argv[1]
for f in sorted(glob.glob(out + "/server-*.log")):
    case = None; rows = {}
    for line in open(f):
        if line.startswith("MARK "): case = line.split()[1]; continue
        if "EXPTRACE" in line and case:
            v = dict(kv.split("=") for kv in line.split("EXPTRACE ")[1].split())
            rows.setdefault(case, []).append({k: float(x) for k, x in v.items()})
    for case, rs in rows.items():
        rs = rs[len(rs)//5:]  # past the warm-up
        med = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
        print(os.path.basename(f), case, len(rs), " ".join(f"{k}={med[k]:.1f}" for k in med))
PY
cat $OUT/stages.txt
grep -E "^== |latency|server us" $OUT/summary.txt | head -80
cd $OUT && tar czf logs.tgz --remove-files server-*.log load && echo "total t=$((SECONDS-T0))"
