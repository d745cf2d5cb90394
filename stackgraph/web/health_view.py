"""Graph health: counts per label and edge type, each source's last scan and staleness, and
who holds the writer lease. Reading is `read_health`; `source_rows` is pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from stackgraph import cypher
from stackgraph.dump import stats
from stackgraph.ingest import lease_key
from stackgraph.store import GraphStore

__all__ = ["LANES", "HealthView", "SourceRow", "read_health", "source_rows"]

LANES = {
    "StaticInfra": "catalog, infra (and change's deploys)",
    "StaticCode": "code",
    "Git": "change",
    "Tempo": "telemetry",
    "Prometheus": "telemetry (metrics), agent write-back",
    "Loki": "logs",
    "Synthetic": "write-back (incidents, hypotheses), memory",
    "LlmInferred": "agent (never validates)",
}
"""Which lanes write facts of each source: the graph records the source on every fact, so a
lane's last ingest is its sources' last scan."""


@dataclass(frozen=True)
class SourceRow:
    source: str
    lanes: str
    nodes: int
    edges: int
    stale: int
    last_scan: float | None
    age_s: float | None


@dataclass(frozen=True)
class HealthView:
    graph: str
    nodes: dict[str, int]
    edges: dict[str, int]
    sources: list[SourceRow]
    lease_holder: str | None
    lease_ttl_ms: int | None


def source_rows(rows: Iterable[Mapping[str, Any]], now: float) -> list[SourceRow]:
    """One row per source, nodes and edges together, the least recently scanned first."""
    acc: dict[str, dict[str, Any]] = {}
    for r in rows:
        a = acc.setdefault(str(r["source"]), {"node": 0, "edge": 0, "stale": 0, "scan": None})
        a[str(r["kind"])] += int(r["n"] or 0)
        a["stale"] += int(r["stale"] or 0)
        if isinstance(r.get("last_scan"), int | float):
            a["scan"] = max(a["scan"] or 0.0, float(r["last_scan"]))
    out = [SourceRow(s, LANES.get(s, ""), a["node"], a["edge"], a["stale"], a["scan"],
                     None if a["scan"] is None else now - a["scan"])
           for s, a in acc.items()]  # fmt: skip
    return sorted(out, key=lambda r: (-(r.age_s or 0.0), r.source))


def read_health(store: GraphStore, reader: GraphStore, now: float) -> HealthView:
    """Counts and sources from the read store; the lease from the primary (it lives there)."""
    counts = stats(reader)
    sources = source_rows(reader.read(cypher.load("web_source_health")), now)
    key = lease_key(store.graph_name)
    holder = store.conn.get(key)
    ttl = store.conn.pttl(key) if holder is not None else None
    text = holder.decode() if isinstance(holder, bytes) else holder
    return HealthView(store.graph_name, counts["nodes"], counts["edges"], sources,
                      None if text is None else str(text), ttl)  # fmt: skip
