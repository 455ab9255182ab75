#!/usr/bin/env bash
# Builds the relocatable package dist/gpureduce-<version>-<commit>-linux-x86_64.tar.gz: the
# binaries with gRPC, protobuf, abseil, libstdc++ and the CUDA runtime linked statically, so that
# a machine with only glibc (2.36 or newer) and the NVIDIA driver runs them. See docs/package.md.
# Usage: scripts/package.sh   (idempotent: rebuilds build/package and replaces the package)
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
build=build/package
max_bytes=$((60 * 1024 * 1024))
max_glibc=2.39 # Ubuntu 24.04, the GPU machines' system
required_binaries=(gpureduce-server gpureduce gpureduce-tests gpureduce-load)
# scripts/ of the package: these must exist; the optional ones go in when they exist.
package_scripts=(scripts/package/run-tests.sh scripts/local_server.sh scripts/measure_stream.sh
                 scripts/compare_stream.sh)
optional_scripts=(scripts/gpu_acceptance.sh scripts/bench_compare.sh scripts/bench_compare.py
                  scripts/measure_load.sh scripts/summarize_load.py scripts/plot_load.py
                  scripts/soak.sh)
# What glibc provides; any other shared library must not be needed.
glibc_libs=" libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 ld-linux-x86-64.so.2 linux-vdso.so.1 "

mib() { awk -v bytes="$1" 'BEGIN { printf "%.1f", bytes / 1048576 }'; }
fail() {
  echo "package: ERROR: $*" >&2
  exit 1
}

scripts/setup.sh
mkdir -p "$build"
cmake --preset package >"$build/configure.log" || { cat "$build/configure.log"; fail "configure failed"; }
grep '^-- gpureduce:' "$build/configure.log" || true
cmake --build --preset package

info() { sed -n "s/^$1: //p" "$build/build-info.txt"; }
version=$(info version)
commit=$(info commit)
name="gpureduce-$version-$commit-linux-x86_64"
stage="dist/$name"
tarball="dist/$name.tar.gz"
# One package in dist/ at a time: this one replaces any earlier one.
rm -rf dist/gpureduce-*-linux-x86_64 dist/gpureduce-*-linux-x86_64.tar.gz
mkdir -p dist

# bin/: every packaged executable that exists (GPUREDUCE_PACKAGE_EXECUTABLES), stripped.
cmake --install "$build" --prefix "$stage" --component package --strip >/dev/null
for binary in "${required_binaries[@]}"; do
  [ -x "$stage/bin/$binary" ] || fail "bin/$binary is missing from the package"
done

mkdir -p "$stage/scripts"
cp "${package_scripts[@]}" "$stage/scripts/"
for script in "${optional_scripts[@]}"; do
  if [ -f "$script" ]; then cp "$script" "$stage/scripts/"; fi
done
cp README.md "$stage/"
cp -r docs "$stage/docs"

# Every binary needs only glibc's libraries and no glibc newer than the GPU machines' own.
newest_glibc=0
for binary in "$stage"/bin/*; do
  for lib in $(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
    [[ "$glibc_libs" == *" $lib "* ]] ||
      fail "$(basename "$binary") needs the shared library $lib, which is not part of glibc"
  done
  if readelf -d "$binary" | grep -qE '\((RPATH|RUNPATH)\)'; then
    fail "$(basename "$binary") has an RPATH/RUNPATH: $(readelf -d "$binary" | grep -E 'R(UN)?PATH')"
  fi
  while read -r lib _; do
    [[ "$glibc_libs" == *" $lib "* || "$lib" == /* ]] ||
      fail "$(basename "$binary") loads $lib (ldd), which is not part of glibc"
  done < <(ldd "$binary")
  glibc=$(readelf -W --dyn-syms "$binary" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' |
          sort -uV | tail -1)
  newest_glibc=$(printf '%s\n%s\n' "$newest_glibc" "$glibc" | sort -V | tail -1)
done
if [ "$(printf '%s\n%s\n' "$newest_glibc" "$max_glibc" | sort -V | tail -1)" != "$max_glibc" ]; then
  fail "the binaries need glibc $newest_glibc, newer than the target's $max_glibc"
fi

# Debian package versions of what went in: "name=package ..." -> "name 1.2.3-4, ...".
versions() {
  local out=() pair
  for pair in "$@"; do
    out+=("${pair%%=*} $(dpkg-query -W -f='${Version}' "${pair#*=}" 2>/dev/null || echo '?')")
  done
  local IFS=,
  echo "${out[*]}" | sed 's/,/, /g'
}
dirty=""
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
  dirty=" (built with uncommitted changes)"
fi
{
  echo "name: $name"
  echo "version: $version"
  echo "commit: $(git rev-parse --verify -q "$commit^{commit}" || echo "$commit")$dirty"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -1)"
  sed -n 's/^\(build type\|cmake\|cuda\): /\1: /p' "$build/build-info.txt"
  echo "compiler: $(c++ --version | head -1)"
  echo "static: $(versions grpc=libgrpc++-dev protobuf=libprotobuf-dev abseil=libabsl-dev \
    re2=libre2-dev c-ares=libc-ares-dev openssl=libssl-dev zlib=zlib1g-dev \
    googletest=libgtest-dev); libstdc++ and libgcc of the compiler; cudart of the CUDA toolkit"
  echo "header-only: $(versions spdlog=libspdlog-dev fmt=libfmt-dev)"
  echo "requires: x86_64 Linux, glibc >= $newest_glibc; the NVIDIA driver (libcuda.so.1) for the CUDA backend"
  echo "executables: $(cd "$stage/bin" && echo *)"
} >"$stage/VERSION"

tar -C dist --owner=0 --group=0 --numeric-owner -czf "$tarball" "$name"

echo
echo "package: $tarball"
sed 's/^/  /' "$stage/VERSION"
echo "  binaries (stripped):"
for binary in "$stage"/bin/*; do
  printf '    %-20s %6s MiB\n' "$(basename "$binary")" "$(mib "$(stat -c %s "$binary")")"
done
bytes=$(stat -c %s "$tarball")
echo "  tarball: $(mib "$bytes") MiB (limit $(mib "$max_bytes") MiB)"
echo "  took $(($(date +%s) - started)) s"
[ "$bytes" -le "$max_bytes" ] || fail "$tarball is $bytes bytes, over the limit of $max_bytes"
