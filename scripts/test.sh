#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs CTest with output on failure.
# Usage: scripts/test.sh [STAGE...]   (default: release; CI runs release asan fuzz deploy)
#   release, asan, debug, fuzz: a CMake preset, built and tested
#   deploy: deploy/ checked: the Kubernetes manifests offline, then the container, its in-Docker
#           build and the Compose stack with Prometheus (reported as SKIPPED where Docker
#           cannot run)
set -euo pipefail
cd "$(dirname "$0")/.."
began=$SECONDS
# Each step's wall time, so that CI's budget can be watched (.ci/run).
timed() {
  local name=$1 start=$SECONDS
  shift
  echo "=== $name"
  "$@"
  echo "=== $name: $((SECONDS - start)) s"
}
timed setup scripts/setup.sh
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(release)
for stage in "${stages[@]}"; do
  if [ "$stage" = deploy ]; then
    timed "deploy: Kubernetes manifests" tests/deploy/k8s_check.sh
    timed "deploy: image, in-Docker build, Compose" tests/deploy/run.sh image source compose
    continue
  fi
  timed "build ($stage)" scripts/build.sh "$stage"
  # Two jobs (CI's two cores); suites that time the server under load run alone (SERIAL in
  # cmake/Testing.cmake).
  timed "test ($stage)" ctest --preset "$stage" --timeout 1200 --parallel "${GPUREDUCE_TEST_JOBS:-2}"
done
echo "=== all stages: $((SECONDS - began)) s"
