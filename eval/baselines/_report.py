"""Print AC@1/AC@3 of every baseline on every dataset (numbers are printed, not asserted).

Usage: ``python -m stackgraph.eval.baselines._report [DATASETS_DIR]``; the directory defaults
to env ``STACKGRAPH_DATASETS`` or ``<repo>/../shared/datasets``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from ..datasets import DEFAULT_DIRS, load_cases
from . import BASELINES, accuracy_at


def default_root() -> Path:
    """Datasets directory from argv, env, or next to the repository."""
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    env = os.environ.get("STACKGRAPH_DATASETS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets"


def main() -> None:
    """Load each dataset, run each baseline, print a table."""
    root = default_root()
    print(f"{'dataset':14} {'cases':>5} {'load s':>7} {'baseline':16} {'AC@1':>6} {'AC@3':>6}")
    for name, sub in DEFAULT_DIRS.items():
        t = time.perf_counter()
        cases = load_cases(name, root / sub)
        load_s = time.perf_counter() - t
        truths = [c.root_cause for c in cases]
        for bname, fn in BASELINES.items():
            try:
                ranks = [fn(c) for c in cases]
            except ImportError as exc:
                print(f"{name:14} {len(cases):5d} {load_s:7.2f} {bname:16} skipped: {exc}")
                continue
            a1, a3 = accuracy_at(ranks, truths, 1), accuracy_at(ranks, truths, 3)
            print(
                f"{name:14} {len(cases):5d} {load_s:7.2f} {bname:16} "
                f"{100 * a1:6.1f} {100 * a3:6.1f}"
            )


if __name__ == "__main__":
    main()
