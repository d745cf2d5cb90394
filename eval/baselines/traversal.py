"""The simple traversal baseline of the PetShop benchmark (Hardt et al., CLeaR 2024): walk the
call graph from the alerting service towards its callees, through services that are
anomalous, and blame the anomalous services where the walk stops, those none of whose
callees is anomalous. PetShop reports it beating the causal methods on its cloud
application, so the ranking has to clear it where it can.

A service is anomalous when one of its series moved by three standard deviations of its
baseline (the mean of the alert window against the baseline's mean and spread); a series
whose baseline has no spread is anomalous on any move. Order: the walk's end points by
their largest z, then the other anomalous services it passed, then the rest, each by z,
ties by name, so every service comes once. The alerting service is its own end point when
no callee of it is anomalous.
"""

from __future__ import annotations

import math
from collections import defaultdict, deque

import numpy as np

from ..datasets.model import Case, MetricSeries
from .simple import service_scores, windowed

Z_OUT = 3.0
"""Three standard deviations: the customary out-of-band rule."""


def series_z(ms: MetricSeries, case: Case) -> float:
    """|mean(alert) - mean(baseline)| / std(baseline); inf for a move off a flat baseline,
    0 for none or when a window has no point."""
    base, alert = windowed(ms, case)
    if base.size == 0 or alert.size == 0:
        return 0.0
    move = abs(float(np.mean(alert)) - float(np.mean(base)))
    sd = float(np.std(base, ddof=1)) if base.size > 1 else 0.0
    if sd > 0:
        return move / sd
    return math.inf if move > 0 else 0.0


def rank_traversal(case: Case) -> list[str]:
    """The walk's end points first (module docstring), then what it passed, then the rest."""
    z = service_scores(case, series_z)
    hot = {s for s, v in z.items() if v >= Z_OUT}
    callees: dict[str, set[str]] = defaultdict(set)
    for e in case.call_edges:
        if e.client != e.server:
            callees[e.client].add(e.server)
    start = case.symptom_service
    seen = {start}
    queue = deque([start])
    while queue:
        for c in sorted(callees[queue.popleft()] & hot):
            if c not in seen:
                seen.add(c)
                queue.append(c)
    ends = {s for s in seen if not callees[s] & hot and (s in hot or s == start)}
    passed = (seen & hot) - ends

    def tier(s: str) -> int:
        return 0 if s in ends else 1 if s in passed else 2

    return sorted(case.services, key=lambda s: (tier(s), -z.get(s, 0.0), s))
