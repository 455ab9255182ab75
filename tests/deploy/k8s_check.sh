#!/usr/bin/env bash
# Offline checks of deploy/k8s, with no cluster and no Docker: renders base and every overlay
# with `kubectl kustomize` and checks them (k8s_check.test.mjs) with node's test runner against
# the Kubernetes schemas of kubernetes-models, installed from npm as package-lock.json pins it.
# Usage: tests/deploy/k8s_check.sh
set -euo pipefail
cd "$(dirname "$0")"
for tool in kubectl node npm; do
  command -v "$tool" >/dev/null || { echo "k8s_check: ERROR: $tool is not installed" >&2; exit 1; }
done
# Install again only when the lock file changed since the last install.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
node --test k8s_check.test.mjs
