#!/usr/bin/env bash
# Builds the relocatable package dist/gpureduce-<version>-<commit>-linux-x86_64.tar.gz: the
# binaries with gRPC, protobuf, abseil and the CUDA runtime linked statically, and in the
# package's lib/ the few shared libraries Debian has in no other form (prometheus-cpp) with what
# they need (civetweb, zlib, libstdc++, libgcc_s), so that a machine with only glibc and the
# NVIDIA driver runs them. See docs/package.md.
# Usage: scripts/package.sh [CMAKE ARGUMENT...]   (idempotent: rebuilds build/package and
#   replaces the package; e.g. -DGPUREDUCE_WITH_CUDA=OFF for a package without the CUDA backend)
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
                  scripts/soak.sh scripts/multi_gpu_acceptance.sh scripts/gpu_arrays_check.sh)
# What glibc provides, and what the package ships in lib/ (Debian 12's builds: prometheus-cpp
# exists only as shared libraries, and they need these); no other shared library may be needed.
glibc_libs=" libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 ld-linux-x86-64.so.2 linux-vdso.so.1 "
shipped_libs=" libprometheus-cpp-core.so.1.0 libprometheus-cpp-pull.so.1.0 libcivetweb.so.1 libcivetweb-cpp.so.1 libz.so.1 libstdc++.so.6 libgcc_s.so.1 "

mib() { awk -v bytes="$1" 'BEGIN { printf "%.1f", bytes / 1048576 }'; }
fail() {
  echo "package: ERROR: $*" >&2
  exit 1
}

scripts/setup.sh
mkdir -p "$build"
cmake --preset package "$@" >"$build/configure.log" || { cat "$build/configure.log"; fail "configure failed"; }
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
# A package configured without the tests (-DGPUREDUCE_BUILD_TESTS=OFF: the container image's
# build, which ships only the server and the clients) has no gpureduce-tests to require.
if grep -q '^GPUREDUCE_BUILD_TESTS:BOOL=OFF$' "$build/CMakeCache.txt"; then
  required_binaries=("${required_binaries[@]/gpureduce-tests/}")
fi
for binary in "${required_binaries[@]}"; do
  [ -z "$binary" ] || [ -x "$stage/bin/$binary" ] || fail "bin/$binary is missing from the package"
done

mkdir -p "$stage/scripts"
cp "${package_scripts[@]}" "$stage/scripts/"
for script in "${optional_scripts[@]}"; do
  if [ -f "$script" ]; then cp "$script" "$stage/scripts/"; fi
done
cp README.md "$stage/"
# docs/ without docs/results: the raw runs the docs cite stay in the repository.
mkdir -p "$stage/docs"
for entry in docs/*; do
  [ "$entry" = docs/results ] || cp -r "$entry" "$stage/docs/"
done

# lib/: the shipped libraries, by their sonames, from where this machine's linker finds them.
mkdir -p "$stage/lib"
for lib in $shipped_libs; do
  path=$(ldconfig -p | sed -n "s/^\t$lib (libc6,x86-64) => //p" | head -1)
  [ -n "$path" ] || path=$(c++ -print-file-name="$lib")
  [ -f "$path" ] || fail "cannot find $lib to ship (scripts/setup.sh installs prometheus-cpp-dev)"
  cp -L "$path" "$stage/lib/$lib"
  strip --strip-unneeded "$stage/lib/$lib"
done

# Every binary and shipped library needs only glibc's libraries and the shipped ones, finds the
# shipped ones in lib/ (DT_RPATH $ORIGIN/../lib for the binaries), and needs no glibc newer than
# the GPU machines' own.
newest_glibc=0
for binary in "$stage"/bin/* "$stage"/lib/*; do
  for lib in $(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
    [[ "$glibc_libs$shipped_libs" == *" $lib "* ]] ||
      fail "$(basename "$binary") needs the shared library $lib, which is neither glibc's nor shipped"
  done
  if [[ "$binary" == */bin/* ]]; then
    rpath=$(readelf -d "$binary" | sed -n 's/.*(RPATH).*\[\(.*\)\]$/\1/p')
    [ "$rpath" = '$ORIGIN/../lib' ] ||
      fail "$(basename "$binary") has RPATH '$rpath', not \$ORIGIN/../lib: $(readelf -d "$binary" | grep -E 'R(UN)?PATH')"
  fi
  glibc=$(readelf -W --dyn-syms "$binary" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' |
          sort -uV | tail -1)
  newest_glibc=$(printf '%s\n%s\n' "$newest_glibc" "$glibc" | sort -V | tail -1)
  # ldd of a library alone ignores the RPATH of the binaries that load it: judge the binaries.
  [[ "$binary" == */bin/* ]] || continue
  while read -r lib _ path _; do
    [[ "$glibc_libs" == *" $lib "* || "$lib" == /* ]] && continue
    [[ "$(realpath -m "$path")" == "$(cd "$stage/lib" && pwd -P)/$lib" ]] ||
      fail "$(basename "$binary") loads $lib from $path (ldd), not from the package's lib/"
  done < <(ldd "$binary")
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
    googletest=libgtest-dev); cudart of the CUDA toolkit"
  echo "shipped in lib/: $(versions prometheus-cpp=libprometheus-cpp-core1.0 \
    civetweb=libcivetweb1 zlib=zlib1g libstdc++=libstdc++6 libgcc=libgcc-s1)"
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
echo "  lib/: $(du -sh "$stage/lib" | cut -f1) ($(cd "$stage/lib" && echo *))"
bytes=$(stat -c %s "$tarball")
echo "  tarball: $(mib "$bytes") MiB (limit $(mib "$max_bytes") MiB)"
echo "  took $(($(date +%s) - started)) s"
[ "$bytes" -le "$max_bytes" ] || fail "$tarball is $bytes bytes, over the limit of $max_bytes"
