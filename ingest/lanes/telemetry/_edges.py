"""Edge statistics (one client→server pair, Tempo's shape) to records. Pure.

How Tempo's service-graph pairs map onto the schema:

| pair                                             | records                                  |
|--------------------------------------------------|------------------------------------------|
| `connection_type` unset                          | Service -CALLS-> Service                 |
| `database`                                       | Service -READS_FROM-> Datastore          |
| `messaging_system` with a subject label          | producer -PUBLISHES_TO-> NatsSubject,    |
|                                                  | consumer -CONSUMES_FROM-> NatsSubject    |
| `messaging_system` without a subject             | producer -CALLS-> consumer, with         |
|                                                  | `connection_type: messaging_system`      |
| virtual server (`virtual_node="server"`, or      | Service -CALLS-> ExternalApi (the peer   |
| `connection_type="virtual_node"` and the client  | attribute Tempo named it by)             |
| is not `user`)                                   |                                          |
| virtual client (`virtual_node="client"`, or the  | no edge: the server Service gets         |
| client `user`, Tempo's uninstrumented caller)    | `entrypoint: true`                       |

Every edge carries `trace_count`, `error_rate`, `latency_p95_ms` and `observed_at`, with
`source: Tempo` (`error_rate` only where a pair's failures were measured: a NaN rate is
"not recorded", and an edge none of whose pairs measured it has none); every node an edge
names is emitted too (source Tempo, no other properties), so no edge lacks an endpoint.
Pairs that map onto the same edge (e.g. two consumers of a subject) are combined: counts
add, error rates are weighted by the measured counts, p95 is the largest (a conservative
bound; quantiles do not add).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from stackgraph.schema import EdgeRecord, NodeRecord, NodeRef, RecordBatch, Source

__all__ = ["USER_CLIENT", "EdgeStat", "edges_to_records"]

USER_CLIENT = "user"
"""The name Tempo gives an uninstrumented caller (a root server/consumer span)."""

_DATABASE = "database"
_MESSAGING = "messaging_system"
_VIRTUAL = "virtual_node"

_Node = tuple[str, str]


@dataclass(frozen=True)
class EdgeStat:
    """What Tempo's service graph knows of one client→server pair over a window."""

    client: str
    server: str
    trace_count: float
    error_rate: float
    latency_p95_ms: float | None
    connection_type: str = ""
    virtual_node: str = ""
    """Tempo's `virtual_node` label: "client" or "server" names the uninstrumented side."""
    subject: str = ""
    """Messaging destination, when the metrics carry it as a dimension."""
    waited_p95_ms: float | None = None
    """p95 of the call as the caller waited for it (client side), where spans gave it."""


def _virtual_side(stat: EdgeStat) -> str:
    if stat.virtual_node in ("client", "server"):
        return stat.virtual_node
    if stat.client == USER_CLIENT:
        return "client"
    if stat.connection_type == _VIRTUAL:
        return "server"
    return ""


@dataclass
class _Acc:
    count: float = 0.0
    measured: float = 0.0
    """Of `count`, the calls whose failures were recorded."""
    failed: float = 0.0
    p95: float | None = None
    connection_type: str = ""

    def add(self, stat: EdgeStat) -> None:
        self.count += stat.trace_count
        if math.isfinite(stat.error_rate):
            self.measured += stat.trace_count
            self.failed += stat.trace_count * min(max(stat.error_rate, 0.0), 1.0)
        lat = stat.latency_p95_ms
        if lat is not None and math.isfinite(lat):
            self.p95 = max(self.p95 or 0.0, float(lat))


def edges_to_records(stats: Sequence[EdgeStat], *, seen_at: float) -> RecordBatch:
    """Turn pair statistics into nodes and edges with `source: Tempo`.

    >>> batch = edges_to_records([EdgeStat("web", "api", 100, 0.01, 42.0)], seen_at=0.0)
    >>> [str(e) for e in batch.edges]
    ["(Service{name='web'})-[:CALLS]->(Service{name='api'})"]
    """
    nodes: dict[_Node, dict[str, bool]] = {}
    edges: dict[tuple[str, _Node, _Node], _Acc] = {}

    def node(label: str, name: str) -> _Node:
        ident = (label, name)
        nodes.setdefault(ident, {})
        return ident

    def edge(etype: str, a: _Node, b: _Node, stat: EdgeStat) -> None:
        acc = edges.setdefault((etype, a, b), _Acc())
        acc.add(stat)
        if etype == "CALLS" and stat.connection_type == _MESSAGING:
            acc.connection_type = _MESSAGING

    for stat in stats:
        if not stat.client or not stat.server or not math.isfinite(stat.trace_count):
            continue
        if stat.trace_count <= 0:
            continue
        side = _virtual_side(stat)
        if side == "client":
            nodes[node("Service", stat.server)]["entrypoint"] = True
            continue
        client = node("Service", stat.client)
        if stat.connection_type == _DATABASE:
            edge("READS_FROM", client, node("Datastore", stat.server), stat)
        elif stat.connection_type == _MESSAGING and stat.subject:
            subject = node("NatsSubject", stat.subject)
            edge("PUBLISHES_TO", client, subject, stat)
            edge("CONSUMES_FROM", node("Service", stat.server), subject, stat)
        elif side == "server":
            edge("CALLS", client, node("ExternalApi", stat.server), stat)
        else:
            edge("CALLS", client, node("Service", stat.server), stat)

    out = RecordBatch()
    for (label, name), flags in sorted(nodes.items()):
        out.nodes.append(
            NodeRecord(
                label, _key(label, name), dict(flags), Source.TEMPO, origin="tempo service graph"
            )
        )
    for (etype, a, b), acc in sorted(edges.items()):
        props: dict[str, float | int | str] = {
            "trace_count": round(acc.count),
            "observed_at": float(seen_at),
        }
        if acc.measured > 0:
            props["error_rate"] = round(acc.failed / acc.measured, 6)
        if acc.p95 is not None:
            props["latency_p95_ms"] = round(acc.p95, 3)
        if acc.connection_type:
            props["connection_type"] = acc.connection_type
        ra, rb = NodeRef(a[0], _key(*a)), NodeRef(b[0], _key(*b))
        out.edges.append(
            EdgeRecord(
                etype, ra, rb, props, Source.TEMPO, origin=f"tempo service graph {a[1]} -> {b[1]}"
            )
        )
    return out


def _key(label: str, name: str) -> dict[str, str]:
    return {"subject" if label == "NatsSubject" else "name": name}
