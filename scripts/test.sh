#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs CTest with output on failure.
# Usage: scripts/test.sh [STAGE...]   (default: release; CI runs release asan fuzz deploy)
#   release, asan, debug, fuzz: a CMake preset, built and tested
#   deploy: deploy/ checked: the Kubernetes manifests offline, then the container, its in-Docker
#           build and the Compose stack with Prometheus (reported as SKIPPED where Docker
#           cannot run)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(release)
for stage in "${stages[@]}"; do
  if [ "$stage" = deploy ]; then
    echo "=== deploy"
    tests/deploy/k8s_check.sh
    tests/deploy/run.sh image source compose
    continue
  fi
  echo "=== build ($stage)"
  scripts/build.sh "$stage"
  echo "=== test ($stage)"
  ctest --preset "$stage" --timeout 1200
done
