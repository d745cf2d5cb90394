"""Tempo's service graph in Prometheus, read for the telemetry lane: one instant query per
statistic over the lane's window, per client→server pair."""

from __future__ import annotations

import math
from collections.abc import Mapping

from stackgraph.prometheus import PrometheusClient
from stackgraph.promql import PromQLNames, Templates, render

from ._edges import EdgeStat

__all__ = ["TEMPLATES", "service_graph_stats"]

TEMPLATES = Templates("stackgraph.ingest.lanes.telemetry")
"""The lane's PromQL (`promql/edge_*.promql`)."""


def _pair(labels: Mapping[str, str], subject_label: str) -> tuple[str, str, str, str, str]:
    return (
        labels.get("client", ""),
        labels.get("server", ""),
        labels.get("connection_type", ""),
        labels.get("virtual_node", ""),
        labels.get(subject_label, ""),
    )


def service_graph_stats(
    prom: PrometheusClient,
    names: PromQLNames,
    at: float | None = None,
    latency_unit_s: float = 1.0,
) -> list[EdgeStat]:
    """Per client→server pair over the window ending at `at`: requests, error rate, p95.

    Pairs with no request in the window are left out: they were not seen. Tempo creates a
    pair's failed-call counter at its first failure, so a pair without one failed nothing,
    but where no pair has one at all, failures are not recorded (spans without a status):
    every error rate is then NaN, not measured, rather than a 0 no one saw.
    """
    q = {
        n: render(TEMPLATES.load(n), names)
        for n in ("edge_requests", "edge_failed", "edge_latency_p95")
    }
    requests = {
        _pair(s.labels, names.subject_label): s.value for s in prom.query(q["edge_requests"], at)
    }
    failed = {
        _pair(s.labels, names.subject_label): s.value for s in prom.query(q["edge_failed"], at)
    }
    p95 = {
        _pair(s.labels, names.subject_label): s.value for s in prom.query(q["edge_latency_p95"], at)
    }
    out: list[EdgeStat] = []
    for pair, count in sorted(requests.items()):
        if not math.isfinite(count) or count <= 0:
            continue
        errors = failed.get(pair, 0.0) if failed else math.nan
        rate = min(max(errors / count, 0.0), 1.0) if math.isfinite(errors) else math.nan
        lat = p95.get(pair)
        lat_ms = lat * latency_unit_s * 1000.0 if lat is not None and math.isfinite(lat) else None
        client, server, ctype, virtual, subject = pair
        out.append(EdgeStat(client, server, count, rate, lat_ms, ctype, virtual, subject))
    return out
