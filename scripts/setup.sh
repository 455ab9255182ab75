#!/usr/bin/env bash
# Installs the Debian 12 packages gpureduce builds with. Idempotent: installs only what is
# missing. Run as root (CI, containers); otherwise it prints the command to run.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git clang-format
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev nlohmann-json3-dev
  prometheus-cpp-dev openssl
  python3-grpcio python3-protobuf python3-numpy python3-pytest  # the Python client and its tests
  clang libclang-rt-14-dev  # the fuzz preset: clang 14, its libFuzzer and sanitizer runtimes
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
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
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
