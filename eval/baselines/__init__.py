"""Reference RCA baselines: ``rank(case) -> list[str]`` (every service once, best first).

``random`` and ``largest-anomaly`` are floors, ``microrca`` is a graph-based classic and
``baro`` is RCAEval's BARO (needs the optional packages in REQUIREMENTS.txt).
"""

from __future__ import annotations

from collections.abc import Callable

from ..datasets.model import Case
from .baro import rank_baro
from .simple import rank_largest_anomaly, rank_microrca, rank_random

BASELINES: dict[str, Callable[[Case], list[str]]] = {
    "random": rank_random,
    "largest-anomaly": rank_largest_anomaly,
    "microrca": rank_microrca,
    "baro": rank_baro,
}


def accuracy_at(ranks: list[list[str]], truths: list[str], k: int) -> float:
    """AC@k: fraction of cases whose root cause is in the top k."""
    if not truths:
        return 0.0
    return sum(t in r[:k] for r, t in zip(ranks, truths, strict=True)) / len(truths)


__all__ = [
    "BASELINES",
    "accuracy_at",
    "rank_baro",
    "rank_largest_anomaly",
    "rank_microrca",
    "rank_random",
]
