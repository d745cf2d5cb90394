"""Topology: criticality, fan-in and position. A prior, not evidence: the fusion uses it to
break ties, never as a vote."""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..facts import Facts
from ..model import Evidence
from .signal import Signal, all_nodes

CRITICALITY = {"low": 0.25, "medium": 0.5, "high": 0.75, "critical": 1.0}
POSITION = {"downstream": 1.0, "anchor": 0.6, "upstream": 0.3, "unlinked": 0.0}
"""Faults mostly propagate from callee to caller: downstream first, callers after; last a
service of the namespace of an anchor the graph links to nothing (`neighbourhood.unlinked`)."""


def topology(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    """Criticality, fan-in (many dependants: a wide blast radius) and position."""
    nodes = all_nodes(facts)
    max_in = max((n.fan_in for n in nodes.values()), default=0)
    scores: dict[str, float] = {}
    evidence: dict[str, tuple[Evidence, ...]] = {}
    for name, n in nodes.items():
        crit = CRITICALITY.get(n.criticality or "", 0.5)
        fan = math.log1p(n.fan_in) / math.log1p(max_in) if max_in > 0 else 0.0
        scores[name] = 0.4 * crit + 0.3 * fan + 0.3 * POSITION.get(n.position, 0.5)
        where = (
            "the alerting service"
            if n.position == "anchor"
            else f"in {facts.anchor}'s namespace; the graph links {facts.anchor} to nothing"
            if n.position == "unlinked"
            else f"{n.depth} hop(s) {n.position} of {facts.anchor}"
        )
        summary = (
            f"criticality {n.criticality or 'unknown'}, fan-in {n.fan_in}, "
            f"fan-out {n.fan_out}; {where}"
        )
        evidence[name] = (
            Evidence("topology", summary, n.source or "graph", round(scores[name], 4),
                     f"{n.label}:{name}", n.status, n.last_seen),
        )  # fmt: skip
    return Signal("topology", scores, evidence)
