"""Query rows of scalars → the read path's node and edge facts."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .facts import EdgeFact, NodeFact, num


def node_fact(name: str, row: Mapping[str, Any], **kw: Any) -> NodeFact:
    """A node from a row of scalars (criticality, source, status, last_seen, degrees)."""
    crit = row.get("criticality")
    return NodeFact(
        name=name,
        label=str(row.get("label") or "Service"),
        criticality=crit if isinstance(crit, str) else None,
        fan_in=int(num(row.get("fan_in")) or 0),
        fan_out=int(num(row.get("fan_out")) or 0),
        source=str_or_none(row.get("source")),
        status=str_or_none(row.get("status")),
        last_seen=num(row.get("last_seen")),
        **kw,
    )


def str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _clean(v: Any, lo: float = 0.0, hi: float = math.inf) -> float | None:
    x = num(v)
    if x is None or not math.isfinite(x):
        return None
    return min(max(x, lo), hi)


def edge_fact(src: str, dst: str, row: Mapping[str, Any]) -> EdgeFact:
    """An edge from a row of scalars (telemetry + provenance prefixed `e_`)."""
    clean = _clean
    return EdgeFact(
        src=src,
        dst=dst,
        type=str(row.get("type") or "CALLS"),
        trace_count=clean(row.get("trace_count")),
        error_rate=clean(row.get("error_rate"), 0.0, 1.0),
        latency_p95_ms=clean(row.get("latency_p95_ms")),
        source=str_or_none(row.get("e_source")),
        status=str_or_none(row.get("e_status")),
        last_seen=num(row.get("e_last_seen")),
    )
