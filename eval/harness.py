"""`evaluate(...)`: load a dataset, replay it through StackGraph and the baselines, score."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stackgraph.rca import DEFAULT, Playbook
from stackgraph.store import GraphStore

from .baselines import BASELINES
from .datasets import load_cases
from .datasets.model import Case
from .replay import Method, Replayer, run_methods
from .scorecard import scorecard

DATASETS = ("nezha", "changerca", "rcd-sockshop", "seeded")


def load(name: str, path: Path | None) -> list[Case]:
    """Cases of a dataset; `seeded` defaults to the set shipped in eval/data/seeded."""
    if name == "seeded":
        from .seeded import DEFAULT_PATH, load_seeded

        return load_seeded(path or DEFAULT_PATH)
    if path is None:
        from .datasets import DatasetError

        raise DatasetError(f"dataset {name!r} needs --path (its folder)")
    return load_cases(name, path)


def evaluate(
    name: str,
    path: Path | None,
    store: GraphStore,
    *,
    settings: Any = None,
    playbook: Playbook = DEFAULT,
    baselines: dict[str, Method] | None = None,
    manifests_root: Path | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """The scorecard of StackGraph and every baseline on the same cases, in one run."""
    cases = load(name, path)
    if limit is not None:
        cases = cases[:limit]
    if manifests_root is None and path is not None:
        guess = Path(path).parent / "manifests"
        manifests_root = guess if guess.is_dir() else None
    replayer = Replayer(store, playbook, manifests_root)
    ranks, secs, skipped = run_methods(
        cases, replayer, BASELINES if baselines is None else baselines, settings
    )
    card = scorecard(name, cases, ranks, secs)
    card["notes"] = [*replayer.notes, *(f"baseline skipped: {s}" for s in skipped)]
    card["windows"] = "adapter windows (eval/datasets/_common.py); alert at the alert window's end"
    return card
