"""History: validated past root causes (Active ROOT_CAUSED_BY edges) as a prior; incidents
on this same anchor count double. Abstains when the graph holds no such outcome.

How often a service was the cause here is a base rate, not evidence about this alert, so the
programs fuse it as a prior that breaks ties (like topology), never as a vote: as a source of
its own it weighed as much as all the metrics, and a platform whose users confirm root
causes would see its plans led by the services that broke most often before."""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..facts import Facts
from ..model import Evidence
from .signal import Signal, votes


def history(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    if not facts.history:
        return votes("history", {}, abstained="no validated past incident around the anchor")
    scores: dict[str, float] = {}
    evidence: dict[str, tuple[Evidence, ...]] = {}
    for name, h in facts.history.items():
        n = h.incidents + h.on_anchor
        s = (1.0 - math.exp(-n / 2.0)) * (h.confidence if h.confidence is not None else 1.0)
        scores[name] = s
        evidence[name] = (
            Evidence("history", f"root cause of {h.incidents} past incident(s), "
                     f"{h.on_anchor} of them on {facts.anchor}", "Incident", round(s, 4),
                     f"ROOT_CAUSED_BY:{name}", None, h.last_seen),
        )  # fmt: skip
    return votes("history", scores, evidence)
