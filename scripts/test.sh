#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs CTest with output on failure.
# Usage: scripts/test.sh [PRESET...]   (default: release; CI also runs asan)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
presets=("$@")
[ ${#presets[@]} -eq 0 ] && presets=(release)
for preset in "${presets[@]}"; do
  echo "=== build ($preset)"
  scripts/build.sh "$preset"
  echo "=== test ($preset)"
  ctest --preset "$preset" --timeout 1200
done
