#!/usr/bin/env bash
# Installs the Debian 12 packages gpureduce builds with. Idempotent: installs only what is
# missing. Run as root (CI, containers); otherwise it prints the command to run.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git clang-format ccache
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev nlohmann-json3-dev
  prometheus-cpp-dev openssl prometheus  # the metrics; promtool checks a scrape in the tests
  python3-grpcio python3-protobuf python3-numpy python3-pytest  # the Python client and its tests
  python3-pip python3-venv python3-setuptools python3-wheel  # pip install client/python, offline
  python3-torch  # the Python client's PyTorch tensors (bfloat16), tested on the CPU
  clang libclang-rt-14-dev  # the fuzz preset: clang 14, its libFuzzer and sanitizer runtimes
  libnghttp2-dev  # tests/attack: a raw HTTP/2 client for the hostile-client tests
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all build dependencies are installed"
else
  echo "setup: missing packages: ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    # Packages with services (prometheus) must not start them: the tests start what they need.
    made_policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
      chmod +x /usr/sbin/policy-rc.d
      made_policy=1
    fi
    status=0
    { apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; } ||
      status=$?
    if [ -n "$made_policy" ]; then rm -f /usr/sbin/policy-rc.d; fi
    [ "$status" -eq 0 ] || exit "$status"
  else
    echo "setup: not root; install them with:"
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}"
    exit 1
  fi
fi

if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null 2>&1; then
  echo "setup: CUDA compiler found: the CUDA backend will be built"
else
  echo "setup: no CUDA compiler (nvcc): the build leaves the CUDA backend out and serves on the CPU"
fi
