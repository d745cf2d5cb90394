#!/usr/bin/env bash
# mypy on the installed package's shape: the top-level folders are mapped into
# `stackgraph` by package-dir, so build a link tree with that shape and check it.
set -euo pipefail
MYPY=${1:-.venv/bin/mypy}
root=build/typecheck
rm -rf "$root"
mkdir -p "$root/stackgraph"
for f in stackgraph/*; do case "$f" in *__pycache__) ;; *) ln -s "../../../$f" "$root/stackgraph/";; esac; done
for d in schema cypher ingest rca memory eval; do ln -s "../../../$d" "$root/stackgraph/$d"; done
"$MYPY" "$root/stackgraph"
