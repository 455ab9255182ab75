#!/usr/bin/env bash
# Stage timings inside a CUDA server's request (XP_TRACE, XP_QTRACE), with small pieces read
# through the mapping (as shipped) and staged by a copy (XP_STAGED), over the Unix socket.
set -u
T0=$SECONDS
mkdir -p /tmp/p && tar xzf dist/gpureduce-*.tar.gz -C /tmp/p
pkg=$(ls -d /tmp/p/gpureduce-*/)
B=${pkg}bin
mkdir -p $OUT/load
L() {
  local name=$1; shift
  timeout 100 $B/gpureduce-load "$@" --json=$OUT/load/$name.json > $OUT/load/$name.txt 2>&1
  echo "== $name rc=$? $*" >> $OUT/summary.txt
  grep -E "answers:|latency:|server us" $OUT/load/$name.txt >> $OUT/summary.txt
}
for round in 1 2; do
  for mode in mapped staged; do
    rm -f /tmp/g.sock
    if [ $mode = staged ]; then export XP_STAGED=1; else unset XP_STAGED; fi
    for c in ipc64 ipc4g single1k; do
      XP_TRACE=1 XP_QTRACE=1 $B/gpureduce-server --backend cuda --listen 127.0.0.1:50051 --listen-unix /tmp/g.sock --allow-shared-memory --host-region-split=off > $OUT/server-$mode-$c-$round.log 2>&1 &
      spid=$!
      for i in $(seq 150); do $B/gpureduce health --target 127.0.0.1:50051 > /dev/null 2>&1 && break; sleep 0.2; done
      S=unix:/tmp/g.sock
      case $c in
        ipc64) L $c-$mode-$round --target $S --shared-memory=cuda --floats 16777216 --requests 1500 --warmup 0.5s --duration 0 ;;
        ipc4g) L $c-$mode-$round --target $S --shared-memory=cuda --floats 1073741824 --payloads 1 --requests 100 --warmup 0.5s --duration 0 ;;
        single1k) L $c-$mode-$round --target $S --floats 1024 --kernel single_pass --duration 3s --warmup 0.5s ;;
      esac
      kill $spid; wait $spid
    done
    echo "$mode $round t=$((SECONDS-T0))"
  done
done
python3 - "$OUT" > $OUT/stages.txt <<'PY'
import sys, glob, statistics, os
for f in sorted(glob.glob(sys.argv[1] + "/server-*.log")):
    rows = {}
    for line in open(f):
        for tag in ("EXPTRACE", "XPQ", "XPL", "XPO"):
            if line.startswith(tag + " "):
                v = {k: float(x) for k, x in (kv.split("=") for kv in line.split()[1:])}
                rows.setdefault(tag, []).append(v)
    for tag, rs in rows.items():
        rs = rs[len(rs)//5:]
        med = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
        print(os.path.basename(f), tag, len(rs), " ".join(f"{k}={med[k]:.1f}" for k in med))
PY
cat $OUT/stages.txt
grep -E "^== |latency|server us" $OUT/summary.txt
cd $OUT && tar czf logs.tgz --remove-files server-*.log load && echo "total t=$((SECONDS-T0))"
