#!/usr/bin/env bash
# Formats the C++ and CUDA sources with .clang-format (Google style, 100 columns), or with
# --check lists the files that differ and fails. The test suite runs the check (format_check).
# Usage: scripts/format.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
# Versions format differently: the tree follows Debian 12's clang-format 14.
formatter=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$formatter" ]; then
  echo "format: clang-format is not installed (scripts/setup.sh installs it)" >&2
  exit 1
fi
if ! "$formatter" --version | grep -q "version 14\."; then
  echo "format: needs clang-format 14 (Debian 12's), found: $("$formatter" --version)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files '*.h' '*.cc' '*.cu' '*.cuh')
if [ "${1:-}" = "--check" ]; then
  unformatted=()
  for file in "${files[@]}"; do
    if ! "$formatter" --dry-run -Werror "$file" >/dev/null 2>&1; then unformatted+=("$file"); fi
  done
  if [ ${#unformatted[@]} -gt 0 ]; then
    echo "format: ${#unformatted[@]} of ${#files[@]} files differ from .clang-format" \
         "(scripts/format.sh fixes them):" >&2
    printf '  %s\n' "${unformatted[@]}" >&2
    exit 1
  fi
  echo "format: all ${#files[@]} sources match .clang-format ($("$formatter" --version))"
else
  "$formatter" -i "${files[@]}"
fi
