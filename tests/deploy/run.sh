#!/usr/bin/env bash
# The container end to end, as docs/deploy.md runs it. Usage: tests/deploy/run.sh [STEP...]
#   image    the image from the host's package (scripts/package.sh; PACKAGE=host) on the CPU
#            backend: its health check turns healthy, the CLI reduces (--verify), gpureduce-load
#            runs without an error, `docker stop` (SIGTERM) ends it with exit code 0
#   source   the image built inside Docker from the sources with CUDA=off, checked the same way
#   compose  deploy/compose.yaml with the cpu profile: a few requests, then Prometheus' HTTP API
#            must show gpureduce_requests_total with exactly those (needs the server's metrics
#            and its GPUREDUCE_* environment variables)
# Default: image source. Prints "SKIPPED: <reason>" and exits 0 where Docker cannot run.
# Installs what is missing from Debian (as root), starts dockerd if none runs and stops it at
# the end, as it removes every container and network it made. GPUREDUCE_DEPLOY_REUSE_PACKAGE=1
# takes dist/ as it is instead of running scripts/package.sh first.
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$(date +%s)
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(image source)
for step in "${steps[@]}"; do
  case "$step" in image | source | compose) ;; *) echo "usage: $0 [image|source|compose]..." >&2; exit 2 ;; esac
done
run_id=gpureduce-deploy-test-$$
tag=deploy-test
export DOCKER_BUILDKIT=0 # the classic builder: BuildKit is not part of Debian's docker.io

say() { echo "deploy: $*"; }
skip() {
  echo "SKIPPED: $*"
  exit 0
}
passed=0
fail() {
  echo "deploy: FAILED: $*" >&2
  echo "deploy: $passed passed, 1 failed"
  exit 1
}
timed() { # NAME COMMAND...: runs it and says how long it took
  local t0=$SECONDS
  "${@:2}"
  say "$1 took $((SECONDS - t0)) s"
}
quietly() { # LOG COMMAND...: its output to LOG, shown (the end) only when it fails
  "${@:2}" >"$1" 2>&1 || { tail -30 "$1"; fail "'${*:2}' failed (log $1)"; }
}

# --- Tools and the engine --------------------------------------------------------------------
install_tools() {
  local packages=(docker.io docker-compose debootstrap prometheus curl jq) missing=() p
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || skip "needs root to install ${missing[*]}"
  say "installing ${missing[*]}"
  # The packages' services (dockerd, prometheus) must not start by themselves: this script
  # starts what it needs and stops it after.
  local made_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    made_policy=1
  fi
  local rc=0
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
      --no-install-recommends "${missing[@]}"; } >/tmp/"$run_id"-apt.log 2>&1 || rc=$?
  if [ -n "$made_policy" ]; then rm -f /usr/sbin/policy-rc.d; fi
  [ "$rc" -eq 0 ] || skip "apt-get could not install ${missing[*]} (see /tmp/$run_id-apt.log)"
}

dockerd_pid=""
made_bridge=""
start_engine() {
  docker info >/dev/null 2>&1 && return 0
  [ "$(id -u)" -eq 0 ] || skip "no Docker engine is running and starting one needs root"
  ip link show docker0 >/dev/null 2>&1 || made_bridge=1 # dockerd makes it and leaves it
  local log=/tmp/$run_id-dockerd.log
  say "starting dockerd (overlay2; log $log)"
  nice dockerd --storage-driver=overlay2 >"$log" 2>&1 &
  dockerd_pid=$!
  for _ in $(seq 60); do
    docker info >/dev/null 2>&1 && return 0
    kill -0 "$dockerd_pid" 2>/dev/null || break
    sleep 0.5
  done
  stop_engine
  skip "dockerd did not start: $(tail -3 "$log" | tr '\n' ' ')"
}
stop_engine() {
  [ -n "$dockerd_pid" ] || return 0
  say "stopping the dockerd this script started"
  kill "$dockerd_pid" 2>/dev/null || true
  wait "$dockerd_pid" 2>/dev/null || true
  dockerd_pid=""
  if [ -n "$made_bridge" ]; then ip link delete docker0 2>/dev/null || true; fi
}

compose() { docker-compose -p "$run_id" -f deploy/compose.yaml --profile cpu "$@"; }
compose_used=""
cleanup() {
  local rc=$?
  set +e
  # Containers of this run by name prefix; the Compose project with its network.
  docker ps -aq --filter "name=^$run_id" 2>/dev/null | xargs -r docker rm -f >/dev/null 2>&1
  if [ -n "$compose_used" ]; then compose down --volumes --remove-orphans -t 15 >/dev/null 2>&1; fi
  stop_engine
  # Logs: kept (and named in the failure) when something failed.
  if [ "$rc" -eq 0 ]; then rm -f /tmp/"$run_id"-*.log; fi
  say "total $(($(date +%s) - started)) s"
  exit "$rc"
}
trap cleanup EXIT

# --- Checks shared by the steps --------------------------------------------------------------
wait_healthy() { # CONTAINER SECONDS
  local status=""
  for _ in $(seq "$2"); do
    status=$(docker inspect -f '{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{end}}' "$1")
    case "$status" in
      "running healthy") return 0 ;;
      exited* | dead*) docker logs "$1" 2>&1 | tail -20; fail "$1 stopped before it was healthy" ;;
    esac
    sleep 1
  done
  docker logs "$1" 2>&1 | tail -20
  fail "$1 not healthy after $2 s (state: $status)"
}

# The image's own gpureduce CLI and gpureduce-load, reaching the server through its published
# port on 127.0.0.1 as a client on the host would.
client_image=""
client() { docker run --rm --network host --entrypoint "$1" "$client_image" "${@:2}"; }

reduce_checked() { # TARGET N SEED: a --random reduction with --verify; the client's float64 reference must agree
  local out
  out=$(client gpureduce reduce --random "$2" --seed "$3" --verify --json --timeout=30s \
        --target="$1") || fail "gpureduce reduce through $1 failed: $out"
  jq -e --argjson n "$2" '.verify.ok == true and .count == $n and .backend == "cpu"' <<<"$out" \
    >/dev/null || fail "wrong answer from $1: $out"
}

serve_and_check() { # IMAGE: run it on the CPU backend, reduce, load, stop with SIGTERM
  local image=$1 name=$run_id-$2 target report
  client_image=$image
  # Flags as well as the image's GPUREDUCE_* defaults: they win, and work before the server
  # reads the environment.
  docker run -d --name "$name" -p 127.0.0.1::50051 --health-interval=1s --health-retries=30 \
    "$image" --listen=0.0.0.0:50051 --backend=cpu >/dev/null
  timed "health check" wait_healthy "$name" 60
  target=$(docker port "$name" 50051/tcp | head -1)
  reduce_checked "$target" 1000003 7 # streamed: larger than one 1 MiB chunk
  reduce_checked "$target" 1000 8    # one unary message
  say "$image: reduce --verify through $target: ok"
  report=$(client gpureduce-load --target="$target" --duration=3s --warmup=0s --connections=2 \
    --concurrency=4 --json=-) || fail "gpureduce-load reported errors: $report"
  jq -e '.failed == 0 and .wrong == 0 and .ok > 0 and (.codes | keys == ["OK"])' <<<"$report" \
    >/dev/null || fail "gpureduce-load: $report"
  say "$image: gpureduce-load: $(jq -r '"\(.ok) requests, \(.rps | floor) rps, 0 errors"' <<<"$report")"
  # SIGTERM (the image's STOPSIGNAL); the server drains for up to 10 s, so 15 s before SIGKILL.
  timed "docker stop" quietly /dev/null docker stop -t 15 "$name"
  local code
  code=$(docker inspect -f '{{.State.ExitCode}}' "$name")
  [ "$code" = 0 ] || { docker logs "$name" 2>&1 | tail -20; fail "$image exited $code after SIGTERM, not 0"; }
  say "$image: SIGTERM: exit code 0"
  docker rm "$name" >/dev/null
}

build_image() { # TAG BUILD-ARG...
  local log=/tmp/$run_id-build-$1.log args=() arg
  for arg in "${@:2}"; do args+=(--build-arg "$arg"); done
  # --force-rm: a failed step's container goes too (the classic builder keeps it otherwise).
  quietly "$log" nice docker build --force-rm -f deploy/docker/Dockerfile "${args[@]}" -t "gpureduce:$1" .
  rm -f "$log"
}

# --- The steps -------------------------------------------------------------------------------
step_image() {
  if [ "${GPUREDUCE_DEPLOY_REUSE_PACKAGE:-0}" != 1 ]; then
    timed "scripts/package.sh" quietly /tmp/"$run_id"-package.log nice scripts/package.sh
  fi
  timed "docker build (PACKAGE=host)" build_image "$tag" PACKAGE=host
  # What the runtime stage promises: a non-root user, both ports, the NVIDIA variables.
  local config
  config=$(docker image inspect -f '{{json .Config}}' "gpureduce:$tag")
  jq -e '.User == "10001:10001" and .StopSignal == "SIGTERM"
         and (.ExposedPorts | has("50051/tcp") and has("9090/tcp"))
         and (.Env | index("NVIDIA_VISIBLE_DEVICES=all") != null)
         and (.Env | index("NVIDIA_DRIVER_CAPABILITIES=compute,utility") != null)
         and (.Healthcheck.Test | join(" ") | test("gpureduce health"))' <<<"$config" >/dev/null ||
    fail "gpureduce:$tag's configuration: $config"
  serve_and_check "gpureduce:$tag" image
}

step_source() {
  timed "docker build (PACKAGE=source CUDA=off)" build_image "$tag-source" PACKAGE=source CUDA=off
  docker run --rm --entrypoint cat "gpureduce:$tag-source" /opt/gpureduce/VERSION |
    grep -q '^cuda: not built' || fail "gpureduce:$tag-source was built with CUDA, asked without"
  serve_and_check "gpureduce:$tag-source" source
}

step_compose() {
  # Not `inspect || step_image`: bash runs the right side of || without errexit.
  if ! docker image inspect "gpureduce:$tag" >/dev/null 2>&1; then step_image; fi
  # Empty ports: Docker picks free ones on 127.0.0.1 (`docker-compose port` tells which).
  export GPUREDUCE_TAG=$tag GPUREDUCE_PORT="" PROMETHEUS_PORT=""
  promtool check config deploy/prometheus/prometheus.yml >/dev/null ||
    fail "promtool check config deploy/prometheus/prometheus.yml"
  compose_used=1
  timed "docker-compose build prometheus" quietly /tmp/"$run_id"-compose-build.log compose build prometheus
  quietly /tmp/"$run_id"-compose-up.log compose up -d --no-build
  local server target prometheus
  client_image=gpureduce:$tag
  server=$(compose ps -q gpureduce-cpu)
  timed "health check (compose)" wait_healthy "$server" 60
  target=$(compose port gpureduce-cpu 50051)
  prometheus=$(compose port prometheus 9090)
  local n
  for n in 1 2 3 4; do reduce_checked "$target" 1000 "$n"; done # unary
  reduce_checked "$target" 1000000 5                            # one stream
  say "compose: 5 requests sent; waiting for Prometheus to scrape them"
  # Prometheus' answer, as "Reduce=4 ReduceStream=1", until it is the expected one (60 s).
  local query='sum by (method) (gpureduce_requests_total{code="OK"})' seen=""
  for _ in $(seq 60); do
    seen=$(curl -fsS --get "http://$prometheus/api/v1/query" --data-urlencode "query=$query" |
           jq -r '[.data.result[] | "\(.metric.method)=\(.value[1])"] | sort | join(" ")') || seen=""
    [ "$seen" = "Reduce=4 ReduceStream=1" ] && break
    sleep 1
  done
  [ "$seen" = "Reduce=4 ReduceStream=1" ] ||
    fail "Prometheus shows '$seen' for $query, expected 'Reduce=4 ReduceStream=1'"
  say "compose: Prometheus scraped gpureduce_requests_total: $seen"
  compose stop -t 15 gpureduce-cpu >/dev/null 2>&1
  [ "$(docker inspect -f '{{.State.ExitCode}}' "$server")" = 0 ] ||
    fail "gpureduce-cpu exited $(docker inspect -f '{{.State.ExitCode}}' "$server") after SIGTERM"
  say "compose: SIGTERM: exit code 0"
}

install_tools
start_engine
timed "base images" tests/deploy/make_base_images.sh
for step in "${steps[@]}"; do
  say "=== $step"
  case "$step" in
    image) timed "step image" step_image ;;
    source) timed "step source" step_source ;;
    compose) timed "step compose" step_compose ;;
  esac
  passed=$((passed + 1))
done
echo "deploy: $passed passed, 0 failed"
