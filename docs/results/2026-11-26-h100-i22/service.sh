#!/usr/bin/env bash
# The service end to end on the GPU, from the unpacked package (the working directory): a CUDA
# server; the CLI on .npy files of float16 (1,000,003 values), bfloat16 (as uint16, --dtype) and
# int32 (a sum past 2^31) with every op in one request and --verify (the client's own long double
# / exact reference); then gpureduce-load, float16 with the five-op list and float32 SUM beside
# it, against the server and against its bare sink in the same run.
set -u
dir=$(mktemp -d)
source scripts/local_server.sh
backend=${BACKEND:-cuda}
start_local_server "$backend" "${BIN:-bin}/gpureduce-server" "${BIN:-bin}/gpureduce" "$dir"
echo "server $server_target"
"${PYTHON:-python3}" - "$dir" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(22)
x = rng.standard_normal(1_000_003).astype(np.float16); x[[0, 500_001, -1]] = [np.nan, 65504, -2.5]
np.save(f"{d}/f16.npy", x)
b = (rng.standard_normal(1_000_003).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
np.save(f"{d}/bf16.npy", b)
i = rng.integers(2**30, 2**31 - 1, size=5, dtype=np.int32)
np.save(f"{d}/i32.npy", i)
print("numpy int32 sum", i.sum(dtype=np.int64), "(past 2^31:", i.sum(dtype=np.int64) > 2**31, ")")
print("numpy float16 nansum", np.nansum(x.astype(np.float64)), "nanmax", np.nanmax(x), "argmax", np.argmax(x))
PY
ops=sum,prod,min,max,mean,sum_squares,argmin,argmax,nansum,nanprod,nanmin,nanmax,nanmean,nanargmin,nanargmax,var,std,nanvar,nanstd
for args in "$dir/f16.npy" "--dtype=bfloat16 $dir/bf16.npy" "$dir/i32.npy"; do
  echo "== gpureduce reduce --op=all 19 --ddof=1 --verify $args"
  ${BIN:-bin}/gpureduce reduce --target="$server_target" --op=$ops --ddof=1 --verify $args
  echo "rc=$?"
done
for dtype in float16 float64; do
  echo "== --random=16777216 --dtype=$dtype five ops"
  ${BIN:-bin}/gpureduce reduce --target="$server_target" --random=16777216 --dtype=$dtype \
    --op=sum,min,max,mean,std --verify | grep -E "result|verify|kernel|timing|server"
done
for op in "--dtype=float32 --op=sum" "--dtype=float16 --op=sum" "--dtype=float16 --op=sum,min,max,mean,std"; do
  for where in server sink; do
    if [ $where = sink ]; then
      ${BIN:-bin}/gpureduce-load sink --listen=127.0.0.1:0 --port-file="$dir/sink-port" >/dev/null 2>&1 &
      sink=$!; for _ in $(seq 100); do [ -s "$dir/sink-port" ] && break; sleep 0.1; done
      target="127.0.0.1:$(cat "$dir/sink-port")"
    else
      target=$server_target
    fi
    echo "== gpureduce-load $where $op --floats=1048576 --concurrency=4 --duration=4s"
    ${BIN:-bin}/gpureduce-load --target="$target" $op --floats=1048576 --concurrency=4 --duration=4s \
      --warmup=1s | grep -E "answers|rps|GB/s|p50|server_us|kernel" | head -8
    [ $where = sink ] && { kill $sink; wait $sink 2>/dev/null; rm -f "$dir/sink-port"; }
  done
done
kill $server_pid; wait $server_pid 2>/dev/null
tail -3 "$dir/server-$backend.log"
