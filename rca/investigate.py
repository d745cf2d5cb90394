"""`investigate(store, alert)` → ranked `Plan`. (Placeholder until the read path lands.)"""

from __future__ import annotations

from stackgraph.store import GraphStore

from .model import Alert, MetricsSource, Plan


def investigate(
    store: GraphStore,
    alert: Alert,
    *,
    at: float | None = None,
    metrics: MetricsSource | None = None,
    hops: int = 2,
    limit: int = 10,
) -> Plan:
    """Fail-open: never raises for an empty, stale or unreachable graph."""
    return Plan(anchor=None, candidates=[], reason="the read path is not built yet", at=at)
