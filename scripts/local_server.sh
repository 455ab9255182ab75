# Sourced by the measuring scripts: starts a gpureduce-server on a free loopback port and waits
# until its health service says SERVING.
#   start_local_server BACKEND SERVER_BINARY CLI_BINARY DIR [SERVER_FLAG...]
# sets server_pid and server_target; the log goes to DIR/server-BACKEND.log.
start_local_server() {
  local backend=$1 server=$2 cli=$3 dir=$4
  shift 4
  rm -f "$dir/port-$backend"
  "$server" --backend="$backend" --listen=127.0.0.1:0 --port-file="$dir/port-$backend" "$@" \
    >"$dir/server-$backend.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 300); do [ -s "$dir/port-$backend" ] && break; sleep 0.1; done
  server_target="127.0.0.1:$(cat "$dir/port-$backend")"
  "$cli" health --target="$server_target" --wait=120s >/dev/null
}
