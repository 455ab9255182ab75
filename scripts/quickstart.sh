#!/usr/bin/env bash
# From a fresh clone to an answer: installs what is missing, builds, starts gpureduce-server on
# a free local port, reduces 100 million random floats through the CLI (checked against a
# float64 reference computed on the client), prints the result with its timing, stops the server.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh release

bin=build/release
workdir=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" || true
  fi
  rm -rf "$workdir"
}
trap cleanup EXIT

"$bin/server/gpureduce-server" --listen=127.0.0.1:0 --port-file="$workdir/port" \
  >"$workdir/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do [ -s "$workdir/port" ] && break; sleep 0.1; done
if [ ! -s "$workdir/port" ]; then
  echo "quickstart: the server did not start:"; cat "$workdir/server.log"; exit 1
fi
target="127.0.0.1:$(cat "$workdir/port")"
"$bin/client/cli/gpureduce" health --target="$target" --wait=30s

echo
echo "\$ gpureduce reduce --random 100000000 --seed 42 --op sum --verify --target $target"
"$bin/client/cli/gpureduce" reduce --random 100000000 --seed 42 --op sum --verify --target="$target"
echo "(--verify also sums the input in long double on the client, which bounds the end-to-end"
echo " rate here; without it the same command measures the service.)"
echo
echo "server log:"
sed 's/^/  /' "$workdir/server.log"
