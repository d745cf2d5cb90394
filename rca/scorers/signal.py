"""What every scorer returns: its votes (a score per candidate it has evidence for), the
evidence behind them, and, when it had nothing to judge, why it abstained.

A candidate missing from `scores` gets no vote from that scorer (no evidence is not
evidence of health), and an abstaining scorer takes no part in the fusion at all. A scorer
whose data reaches only some candidates says which (`covered`): the others were not judged
at all, and the fusion treats them as average, neither for nor against (`rca.fusion`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from ..facts import Facts, NodeFact
from ..model import Evidence

__all__ = ["STALE_FACTOR", "Scorer", "Signal", "all_nodes", "votes"]

STALE_FACTOR = 0.5
"""A Stale edge's telemetry counts half: it was true once, it may not be now."""


@dataclass(frozen=True)
class Signal:
    name: str
    scores: Mapping[str, float]
    evidence: Mapping[str, tuple[Evidence, ...]] = field(default_factory=dict)
    abstained: str = ""
    """Why the scorer judged nothing (no data of its kind); empty when it voted."""
    covered: frozenset[str] | None = None
    """The candidates its data reaches; None: every candidate."""


Scorer = Callable[[Facts, Mapping[str, Signal]], Signal]


def all_nodes(facts: Facts) -> dict[str, NodeFact]:
    nodes = dict(facts.nodes)
    nodes.setdefault(facts.anchor, NodeFact(facts.anchor, position="anchor"))
    return nodes


def votes(
    name: str,
    scores: Mapping[str, float],
    evidence: Mapping[str, tuple[Evidence, ...]] | None = None,
    abstained: str = "",
    covered: Iterable[str] | None = None,
) -> Signal:
    """A Signal keeping only positive scores as votes; abstaining when `abstained` says why;
    `covered`: the candidates the scorer's data reaches (None: all)."""
    kept = {k: float(v) for k, v in scores.items() if v > 0}
    reach = None if covered is None else frozenset(covered) | frozenset(kept)
    return Signal(name, kept, dict(evidence or {}), abstained, reach)
