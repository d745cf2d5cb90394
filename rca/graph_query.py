"""`query_stack_graph`: a service's neighbourhood, or the paths between two services, as
sentences a person (or a model) can read. One function behind three faces: the agent's tool,
the HTTP endpoint and the MCP server.

    checkout calls payment (error rate 12%, p95 840 ms, from Tempo, seen 2 min ago)

Hops are clamped to 1..4 and expanded one constant template at a time; results are bounded.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from typing_extensions import TypedDict

from stackgraph import cypher
from stackgraph.errors import InputError, StackGraphError
from stackgraph.schema import INTERNAL_PREFIX, LABELS
from stackgraph.store import GraphStore

MAX_HOPS = 4
MAX_EDGES = 500

_VERBS = {
    "CALLS": "calls",
    "READS_FROM": "reads from",
    "PUBLISHES_TO": "publishes to",
    "CONSUMES_FROM": "consumes from",
    "EXPOSES": "exposes",
    "DEPLOYED_AS": "is deployed as",
    "IN_NAMESPACE": "is in namespace",
    "ROUTES_TO": "routes to",
    "DEPLOYED": "deployed",
    "CHANGED": "changed",
    "IMPLEMENTS": "implements",
    "FIRED_ON": "fired on",
    "AFFECTS": "affected",
    "ROOT_CAUSED_BY": "was root-caused by",
}


class Triple(TypedDict):
    src: str
    src_label: str
    type: str
    dst: str
    dst_label: str
    props: dict[str, Any]


class GraphAnswer(TypedDict):
    """What query_stack_graph returns (a TypedDict so MCP sets structured content)."""

    service: str
    other: str | None
    hops: int
    sentences: list[str]
    paths: list[list[str]]
    triples: list[Triple]
    reason: str


def node_name(label: str, props: Mapping[str, Any]) -> str:
    spec = LABELS.get(label)
    keys = spec.keys if spec else ("name",)
    parts = [str(props.get(k, "?")) for k in keys]
    if label == "Change" and len(parts) == 2:
        return f"{parts[0]}@{parts[1][:10]}"
    return parts[0] if len(parts) == 1 else "/".join(parts)


def _ago(seconds: float) -> str:
    if seconds < 90:
        return f"{max(0, int(seconds))} s ago"
    if seconds < 5400:
        return f"{round(seconds / 60)} min ago"
    if seconds < 172_800:
        return f"{round(seconds / 3600)} h ago"
    return f"{round(seconds / 86400)} days ago"


def sentence(t: Triple, now: float | None) -> str:
    """One edge as a sentence with its measured properties and provenance."""
    p = t["props"]
    bits: list[str] = []
    if isinstance(p.get("error_rate"), int | float):
        bits.append(f"error rate {100 * float(p['error_rate']):.3g}%")
    if isinstance(p.get("latency_p95_ms"), int | float):
        bits.append(f"p95 {float(p['latency_p95_ms']):.0f} ms")
    if isinstance(p.get("trace_count"), int | float):
        bits.append(f"{int(p['trace_count'])} traces")
    if p.get("source"):
        bits.append(f"from {p['source']}")
    if p.get("status") and p.get("status") != "Active":
        bits.append(str(p["status"]).lower())
    if now is not None and isinstance(p.get("last_seen"), int | float):
        bits.append(f"seen {_ago(now - float(p['last_seen']))}")
    verb = _VERBS.get(t["type"], t["type"].lower().replace("_", " "))
    tail = f" ({', '.join(bits)})" if bits else ""
    return f"{t['src']} {verb} {t['dst']}{tail}"


@dataclass
class _Edges:
    triples: list[Triple] = field(default_factory=list)
    seen: set[tuple[str, str, str, str, str]] = field(default_factory=set)

    def add(self, row: Mapping[str, Any]) -> Triple | None:
        t = Triple(
            src=node_name(row["a_label"], row["a"] or {}),
            src_label=row["a_label"],
            type=row["type"],
            dst=node_name(row["b_label"], row["b"] or {}),
            dst_label=row["b_label"],
            props={k: v for k, v in (row["p"] or {}).items() if not k.startswith(INTERNAL_PREFIX)},
        )
        key = (t["src_label"], t["src"], t["type"], t["dst_label"], t["dst"])
        if key in self.seen:
            return None
        self.seen.add(key)
        self.triples.append(t)
        return t


def _expand(store: GraphStore, names: list[str], edges: _Edges, limit: int) -> set[str]:
    """One hop in both directions; returns the Service names newly reached."""
    reached: set[str] = set()
    for template in ("sg_neighbours_out", "sg_neighbours_in"):
        rows = store.read(cypher.load(template), {"names": names, "limit": limit})
        for row in rows:
            t = edges.add(row)
            if t is None:
                continue
            if t["src_label"] == "Service":
                reached.add(t["src"])
            if t["dst_label"] == "Service":
                reached.add(t["dst"])
    return reached


def query_stack_graph(
    store: GraphStore,
    service: str,
    other: str | None = None,
    *,
    hops: int = 1,
    raw: bool = False,
    limit: int = 100,
    now: float | None = None,
    ages: bool = True,
) -> GraphAnswer:
    """Neighbourhood of `service` (within `hops`), or the paths from `service` to `other`.

    `ages=False` leaves out "seen N min ago" (evidence that is stored must not depend on
    when it was read, so re-running an investigation writes the same graph).

    Fail-open like the read path: an unreachable store gives an empty answer with a reason.
    """
    hops = max(1, min(MAX_HOPS, int(hops)))
    limit = max(1, min(MAX_EDGES, int(limit)))
    now = time.time() if now is None else now
    answer = GraphAnswer(
        service=service, other=other, hops=hops, sentences=[], paths=[], triples=[], reason=""
    )
    edges = _Edges()
    adjacency: dict[str, set[str]] = {}
    try:
        frontier, visited = [service], {service}
        for _ in range(hops if other is None else MAX_HOPS):
            if not frontier or len(edges.triples) >= limit:
                break
            reached = _expand(store, frontier, edges, limit)
            frontier = sorted(reached - visited)
            visited |= reached
            if other is not None and other in visited:
                break
    except InputError as exc:  # text no query may carry (a NUL, a lone surrogate)
        answer["reason"] = f"refused: {exc}"
        return answer
    except StackGraphError as exc:
        answer["reason"] = f"graph unavailable: {exc}"
        return answer
    for t in edges.triples:
        if t["src_label"] == "Service" and t["dst_label"] == "Service":
            adjacency.setdefault(t["src"], set()).add(t["dst"])
            adjacency.setdefault(t["dst"], set()).add(t["src"])
    if other is not None:
        answer["paths"] = _paths(adjacency, service, other, MAX_HOPS)
        on_path = {(a, b) for p in answer["paths"] for a, b in itertools.pairwise(p)}
        chosen = [t for t in edges.triples if (t["src"], t["dst"]) in on_path
                  or (t["dst"], t["src"]) in on_path]  # fmt: skip
        if not answer["paths"]:
            answer["reason"] = f"no path between {service} and {other} within {MAX_HOPS} hops"
    else:
        chosen = edges.triples[:limit]
    if not edges.triples and not answer["reason"]:
        answer["reason"] = f"no service named {service!r} in the graph, or it has no edges"
    answer["sentences"] = [sentence(t, now if ages else None) for t in chosen]
    if raw:
        answer["triples"] = chosen
    return answer


def _paths(adj: Mapping[str, set[str]], start: str, goal: str, max_hops: int) -> list[list[str]]:
    """All shortest paths (undirected over Service-Service edges), at most 10."""
    if start == goal:
        return [[start]]
    dist = {start: 0}
    parents: dict[str, list[str]] = {start: []}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if dist[node] >= max_hops:
            continue
        for nxt in sorted(adj.get(node, ())):
            if nxt not in dist:
                dist[nxt] = dist[node] + 1
                parents[nxt] = [node]
                queue.append(nxt)
            elif dist[nxt] == dist[node] + 1:
                parents[nxt].append(node)
    if goal not in dist:
        return []
    out: list[list[str]] = []

    def walk(node: str, tail: list[str]) -> None:
        if len(out) >= 10:
            return
        if node == start:
            out.append([start, *tail])
            return
        for parent in parents[node]:
            walk(parent, [node, *tail])

    walk(goal, [])
    return out
