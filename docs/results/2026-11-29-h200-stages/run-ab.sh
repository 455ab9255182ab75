#!/usr/bin/env bash
# A/B on the host: the CUDA server before (fd02eb5: its stream idle watch woke a thread on every
# call) and after (d42f653), both running at once beside the sink, gpureduce-load at c1 taking
# turns: unary 1024 floats (auto: the CPU; and single_pass forced) and 64 MiB by CUDA IPC, over
# the Unix socket and TCP; three rounds, who goes first alternating.
set -u
T0=$SECONDS
mkdir -p /tmp/p && tar xzf dist/gpureduce-*.tar.gz -C /tmp/p
pkg=$(ls -d /tmp/p/gpureduce-*/)
B=${pkg}bin
gunzip -c dist/old-server.gz > ${B}/old-server && chmod +x ${B}/old-server
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat ${pkg}VERSION | head -3; nproc; } > $OUT/host.txt 2>&1
mkdir -p $OUT/load
${B}/old-server --backend cuda --listen 127.0.0.1:50061 --listen-unix /tmp/old.sock --allow-shared-memory > $OUT/server-old.log 2>&1 &
$B/gpureduce-server --backend cuda --listen 127.0.0.1:50062 --listen-unix /tmp/new.sock --allow-shared-memory > $OUT/server-new.log 2>&1 &
$B/gpureduce-load sink --listen 127.0.0.1:50063 --listen-unix /tmp/sink.sock > $OUT/sink.log 2>&1 &
for port in 50061 50062 50063; do
  for i in $(seq 200); do $B/gpureduce health --target 127.0.0.1:$port > /dev/null 2>&1 && break; sleep 0.2; done
done
echo "started t=$((SECONDS-T0))"
L() {
  local name=$1; shift
  timeout 60 $B/gpureduce-load "$@" --json=$OUT/load/$name.json > $OUT/load/$name.txt 2>&1
  echo "== $name rc=$? $*" >> $OUT/summary.txt
  grep -E "latency:|server us" $OUT/load/$name.txt >> $OUT/summary.txt
}
for round in 1 2 3; do
  order="old new"; [ $((round % 2)) = 0 ] && order="new old"
  for who in $order sink; do
    case $who in old) U=unix:/tmp/old.sock T=127.0.0.1:50061 ;; new) U=unix:/tmp/new.sock T=127.0.0.1:50062 ;; sink) U=unix:/tmp/sink.sock T=127.0.0.1:50063 ;; esac
    L unary1k-unix-$who-$round --target $U --floats 1024 --duration 3s --warmup 0.5s
    L unary1k-tcp-$who-$round --target $T --floats 1024 --duration 3s --warmup 0.5s
    [ $who = sink ] && continue
    L single1k-unix-$who-$round --target $U --floats 1024 --kernel single_pass --duration 3s --warmup 0.5s
    L ipc64-unix-$who-$round --target $U --shared-memory=cuda --floats 16777216 --requests 2000 --warmup 0.5s --duration 0
  done
  echo "round $round t=$((SECONDS-T0))"
done
kill %1 %2 %3; wait
cat > /dev/null <<'PY'
import json, glob, sys, os, collections
rows = collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1] + "/load/*.json")):
    case, path, who, rnd = os.path.basename(f)[:-5].rsplit("-", 3)
    j = json.load(open(f))
    def find(d, *keys):
        for k in keys:
            if isinstance(d, dict) and k in d: d = d[k]
            else: return None
        return d
    rows[(case, path, who)].append(j)
print(json.dumps({"keys": list(next(iter(rows.values()))[0].keys())}))
PY

grep -E "^== |latency|server us" $OUT/summary.txt
cd $OUT && tar czf load.tgz --remove-files load; echo "total t=$((SECONDS-T0))"
