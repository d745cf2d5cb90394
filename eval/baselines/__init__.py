"""Reference RCA baselines: ``rank(case) -> list[str]`` (every service once, best first).

``random`` and ``largest-anomaly`` are floors, ``microrca`` is a graph-based classic,
``simple-traversal`` is PetShop's simple walk from the alerting service and ``baro`` is RCAEval's
BARO (needs the optional packages in REQUIREMENTS.txt). Each runs on the case as the replay
observed it: the same series, windows and call graph StackGraph had.
Where a dataset has releases, each also runs `released_first` (the `+releases` variants),
so no method is the only one told what changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..datasets.model import Case
from .baro import rank_baro
from .simple import rank_largest_anomaly, rank_microrca, rank_random
from .traversal import rank_traversal

Method = Callable[[Case], list[str]]

BASELINES: dict[str, Method] = {
    "random": rank_random,
    "largest-anomaly": rank_largest_anomaly,
    "microrca": rank_microrca,
    "simple-traversal": rank_traversal,
    "baro": rank_baro,
}

INPUTS: Mapping[str, tuple[str, ...]] = {
    "stackgraph": (
        "graph (catalog, infra, change, telemetry lanes)",
        "Prometheus probes",
        "log lines where the dataset has them",
    ),
    "random": ("service list",),
    "largest-anomaly": ("Prometheus series",),
    "microrca": ("Prometheus series", "call graph (Tempo)"),
    "simple-traversal": ("Prometheus series", "call graph (Tempo)", "the alerting service"),
    "baro": ("Prometheus series",),
}
"""What each method reads; `+releases` variants add "releases"."""

RELEASES = "+releases"


def released_first(rank: Method) -> Method:
    """`rank`, with the services released before the alert moved to the front (in the
    order `rank` gave them): the change-aware variant of a method."""

    def ranked(case: Case) -> list[str]:
        released = {c.service for c in case.changes}
        order = rank(case)
        return [s for s in order if s in released] + [s for s in order if s not in released]

    return ranked


def inputs_of(method: str) -> tuple[str, ...]:
    if method.startswith("stackgraph-") or method.endswith(" alone"):
        return ("the same plan's votes",)
    base = method.removesuffix(RELEASES)
    return (*INPUTS.get(base, ()), *(("releases",) if method.endswith(RELEASES) else ()))


def accuracy_at(ranks: list[list[str]], truths: list[str], k: int) -> float:
    """AC@k: fraction of cases whose root cause is in the top k."""
    if not truths:
        return 0.0
    return sum(t in r[:k] for r, t in zip(ranks, truths, strict=True)) / len(truths)


__all__ = [
    "BASELINES",
    "INPUTS",
    "RELEASES",
    "Method",
    "accuracy_at",
    "inputs_of",
    "rank_baro",
    "rank_largest_anomaly",
    "rank_microrca",
    "rank_random",
    "rank_traversal",
    "released_first",
]
