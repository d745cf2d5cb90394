"""A service's k-hop neighbourhood in the world-model, with its recent deploys and changes,
as the graph held it now or at a past moment (the time-travel predicate `visible_at`).

Reading (`read_service`) is the side effect; `service_graph` and `history` are pure and
give the page the same drawing model as the blame graph (`BlameGraph`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stackgraph import cypher
from stackgraph.store import GraphStore
from stackgraph.timetravel import at_params

from .blame_graph import BlameEdge, BlameGraph, BlameNode, edge_label, number
from .layout import extent, link, place

__all__ = ["MAX_HOPS", "ServiceView", "history", "read_service", "service_graph"]

MAX_HOPS = 2
MAX_NODES = 40
"""Nodes drawn; a hub's whole 2-hop neighbourhood is not a picture anyone reads."""
HOOD_LIMIT = 400
HISTORY_LIMIT = 10


def node_id(label: str, name: str) -> str:
    """Services by name; anything else also by label (a Deployment is often named like
    its Service)."""
    return name if label == "Service" else f"{label}:{name}"


@dataclass(frozen=True)
class ServiceView:
    name: str
    at: float | None
    hops: int
    known: bool
    graph: BlameGraph
    deploys: list[dict[str, Any]] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)
    incidents: list[dict[str, Any]] = field(default_factory=list)


def service_graph(service: str, rows: Iterable[Mapping[str, Any]]) -> BlameGraph:
    """The neighbourhood drawn in layers of hops from the service (`hop` on each row),
    at most MAX_NODES nodes; edges point the way the graph holds them."""
    layer: dict[str, int] = {service: 0}
    kinds: dict[str, str] = {service: "Service"}
    texts: dict[str, str] = {service: service}
    edges: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for r in rows:
        if r.get("name") is None:
            continue
        other = node_id(str(r["label"]), str(r["name"]))
        if other not in layer and len(layer) >= MAX_NODES:
            continue
        layer.setdefault(other, int(r["hop"]))
        kinds.setdefault(other, str(r["label"]))
        texts.setdefault(other, str(r["name"]))
        src, dst = (str(r["from"]), other) if r["outgoing"] else (other, str(r["from"]))
        edges.setdefault((src, dst, str(r["type"])), r)
    placed = place(layer, {service: 1.0})
    nodes = [BlameNode(name=n, text=texts[n], kind=kinds[n],
                       role="focus" if n == service else "path",
                       state=None, score=None, rank=None, confidence=None,
                       x=p.x, y=p.y, r=p.r)
             for n, p in placed.items()]  # fmt: skip
    drawn = []
    for (src, dst, kind), r in sorted(edges.items()):
        if src in placed and dst in placed:
            err, p95 = number(r.get("error_rate")), number(r.get("p95_ms"))
            drawn.append(BlameEdge(**link(placed[src], placed[dst]).model_dump(), src=src,
                                   dst=dst, type=kind, error_rate=err, p95_ms=p95,
                                   source=str(r.get("source") or "?"),
                                   status=str(r.get("status") or "?"),
                                   label=edge_label(err, p95) or kind))  # fmt: skip
    width, height = extent(placed, texts)
    return BlameGraph(anchor=service, nodes=nodes, edges=drawn, width=width, height=height)


def history(rows: Iterable[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], ...]:
    """Deploys (newest first), changes (one per commit, newest first), past incidents."""
    deploys: list[dict[str, Any]] = []
    changes: dict[str, dict[str, Any]] = {}
    incidents: list[dict[str, Any]] = []
    for r in rows:
        props = dict(r.get("props") or {})
        if r["kind"] == "deploy":
            deploys.append(props)
        elif r["kind"] == "change":
            changes.setdefault(str(props.get("commit_sha")), props)
        elif r["kind"] == "history" and r.get("incidents"):
            incidents.append(dict(r))
    deploys.sort(key=lambda p: -float(p.get("deployed_at") or 0))
    ordered = sorted(changes.values(), key=lambda p: -float(p.get("committed_at") or 0))
    return deploys, ordered, incidents


def read_service(reader: GraphStore, name: str, hops: int, at: float | None) -> ServiceView:
    """Hop by hop out of Services only (a Namespace's or Node's every member would drown
    the picture), each hop one bounded, parameterised read."""
    hops = max(1, min(hops, MAX_HOPS))
    rows: list[dict[str, Any]] = []
    seen, frontier = {name}, [name]
    for hop in range(1, hops + 1):
        found = reader.read(cypher.load("web_service_hood"),
                            {"names": frontier, "limit": HOOD_LIMIT, **at_params(at)})  # fmt: skip
        rows += [{**r, "hop": hop} for r in found]
        frontier = sorted({str(r["name"]) for r in found if r["label"] == "Service"} - seen)
        seen.update(frontier)
        if not frontier:
            break
    past = reader.read(cypher.load("rca_changes_history"),
                       {"names": [name], "anchor": name, "limit": HISTORY_LIMIT,
                        "history": HISTORY_LIMIT, **at_params(at)})  # fmt: skip
    deploys, changes, incidents = history(past)
    known = bool(reader.read(cypher.load("web_service_at"), {"name": name, **at_params(at)}))
    return ServiceView(name, at, hops, known, service_graph(name, rows), deploys, changes,
                       incidents)  # fmt: skip
