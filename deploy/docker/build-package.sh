#!/usr/bin/env bash
# The build stage of deploy/docker/Dockerfile; its build arguments arrive as the environment:
# PACKAGE (source or host), CUDA (a toolkit version such as 13-0, or off), NVIDIA_APT_REPO.
#   build-package.sh deps      source: Debian's build dependencies and the CUDA toolkit
#   build-package.sh package   the package into /opt/gpureduce: built with scripts/package.sh
#                              (source) or unpacked from dist/ of the build context (host)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=/opt/gpureduce
# What the image needs of the package; its tests and scripts stay out.
binaries=(gpureduce-server gpureduce gpureduce-load)

fail() {
  echo "build-package: ERROR: $*" >&2
  exit 1
}
case "${PACKAGE:-}" in
  source | host) ;;
  *) fail "PACKAGE must be source or host, not '${PACKAGE:-}'" ;;
esac

deps() {
  [ "$PACKAGE" = source ] || return 0
  export DEBIAN_FRONTEND=noninteractive
  if [ "${CUDA:-off}" != off ]; then
    # NVIDIA's signing key and repository (cuda-keyring), then only what the build uses:
    # nvcc, the static runtime and CUB.
    apt-get update -q
    apt-get install -y -q --no-install-recommends ca-certificates curl
    curl -fsSL -o /tmp/cuda-keyring.deb "$NVIDIA_APT_REPO/cuda-keyring_1.1-1_all.deb"
    dpkg -i /tmp/cuda-keyring.deb
    rm /tmp/cuda-keyring.deb
    apt-get update -q
    apt-get install -y -q --no-install-recommends \
      "cuda-nvcc-$CUDA" "cuda-cudart-dev-$CUDA" "cuda-cccl-$CUDA"
    # The build looks for /usr/local/cuda/bin/nvcc; the packages install /usr/local/cuda-X.Y.
    [ -e /usr/local/cuda ] || ln -s "cuda-${CUDA/-/.}" /usr/local/cuda
    [ -x /usr/local/cuda/bin/nvcc ] || fail "cuda-nvcc-$CUDA did not install /usr/local/cuda/bin/nvcc"
  fi
  "$here/setup.sh"
  rm -rf /var/lib/apt/lists/*
}

package() {
  local tarball
  if [ "$PACKAGE" = source ]; then
    # Without nvcc the build leaves CUDA out anyway; CUDA=off says so even where nvcc exists.
    # The image ships no tests (below), so none are built: half the compile.
    local cuda=()
    [ "${CUDA:-off}" = off ] && cuda=(-DGPUREDUCE_WITH_CUDA=OFF)
    nice scripts/package.sh -DGPUREDUCE_BUILD_TESTS=OFF "${cuda[@]}"
  fi
  # scripts/package.sh keeps exactly one package in dist/.
  shopt -s nullglob
  local found=(dist/gpureduce-*-linux-x86_64.tar.gz)
  [ ${#found[@]} -eq 1 ] ||
    fail "expected one dist/gpureduce-*-linux-x86_64.tar.gz, found ${#found[@]}: run scripts/package.sh first"
  tarball=${found[0]}
  mkdir -p /tmp/package "$out/bin"
  tar -xzf "$tarball" -C /tmp/package --strip-components=1
  for binary in "${binaries[@]}"; do
    [ -x "/tmp/package/bin/$binary" ] || fail "$tarball has no bin/$binary"
    cp "/tmp/package/bin/$binary" "$out/bin/"
  done
  # The shared libraries the package ships beside the binaries ($ORIGIN/../lib run path).
  [ -d /tmp/package/lib ] || fail "$tarball has no lib/ (prometheus-cpp and what it needs)"
  cp -a /tmp/package/lib "$out/"
  [ -f /tmp/package/VERSION ] || fail "$tarball has no VERSION: not a package of scripts/package.sh"
  cp /tmp/package/VERSION "$out/"
  rm -rf /tmp/package
  echo "build-package: $(basename "$tarball") ($PACKAGE):"
  sed 's/^/  /' "$out/VERSION"
}

case "${1:-}" in
  deps) deps ;;
  package) package ;;
  *) fail "usage: build-package.sh deps|package" ;;
esac
