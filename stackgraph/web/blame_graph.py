"""The blame subgraph of an incident as a view model: the symptom, the candidates and the
paths between them, with each edge's error rate, p95 and provenance.

Built by a pure function from the incident's JSON view (`IncidentDetail`, the same model
`GET /api/v1/incidents/{fp}` answers) and the edge rows the graph holds; the JSON route
`GET /api/v1/incidents/{fp}/graph` and the web page both render this one model.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from stackgraph import cypher
from stackgraph.errors import StoreError
from stackgraph.store import GraphStore

from .layout import Link, Placed, extent, link, place

if TYPE_CHECKING:
    from stackgraph.api.schemas import IncidentDetail

__all__ = [
    "BlameEdge",
    "BlameGraph",
    "BlameNode",
    "blame_graph",
    "edge_label",
    "edge_rows",
    "graph_for",
    "number",
]

MAX_CANDIDATES = 8
"""Candidates drawn (by rank); more makes a picture nobody reads. The table lists all."""
MAX_EDGES = 200

Role = Literal["symptom", "candidate", "path", "focus"]
"""`focus`: the service a neighbourhood is drawn around (the service page)."""


class BlameNode(BaseModel):
    name: str
    """Unique in the drawing (a non-Service elsewhere is `Label:name`)."""
    text: str
    """What the drawing writes under the node."""
    kind: str
    role: Role
    state: str | None
    """The hypothesis state (Candidate / Supported / Refuted / Validated); None off the plan."""
    score: float | None
    rank: int | None
    confidence: float | None
    x: float
    y: float
    r: float


class BlameEdge(Link):
    """An edge of the drawing: what the graph holds about it, and its curve (`Link`:
    x1,y1 → x2,y2 through the control point cx,cy; the label at lx,ly)."""

    src: str
    dst: str
    type: str
    error_rate: float | None
    p95_ms: float | None
    source: str
    """Provenance (Tempo, StaticInfra, StaticCode...), or "plan" for a path step the
    graph no longer holds an edge for."""
    status: str
    label: str


class BlameGraph(BaseModel):
    anchor: str | None
    nodes: list[BlameNode]
    edges: list[BlameEdge]
    width: float
    height: float


def edge_label(error_rate: float | None, p95_ms: float | None) -> str:
    parts = []
    if error_rate is not None:
        parts.append(f"err {error_rate * 100:.1f}%")
    if p95_ms is not None:
        parts.append(f"p95 {p95_ms:.0f} ms")
    return " · ".join(parts)


def _layers(anchor: str | None, candidates: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Each name's distance from the symptom along the plan's own paths (its layer)."""
    layer: dict[str, int] = {anchor: 0} if anchor else {}
    for c in candidates:
        paths = [list(p) for p in c.get("paths") or ()]
        for path in paths:
            for i, name in enumerate(path):
                layer[str(name)] = min(layer.get(str(name), i), i)
        layer.setdefault(str(c["service"]), 1 if paths or anchor else 0)
    return layer


def _kinds(
    candidates: Sequence[Mapping[str, Any]], rows: Iterable[Mapping[str, Any]]
) -> dict[str, str]:
    kinds = {str(r["dst"]): str(r.get("dst_label") or "Service") for r in rows}
    kinds.update({str(c["service"]): str(c.get("kind") or "Service") for c in candidates})
    return kinds


def _edges(
    candidates: Sequence[Mapping[str, Any]], rows: Iterable[Mapping[str, Any]], names: set[str]
) -> list[dict[str, Any]]:
    """The graph's edges among the drawn names, plus any path step it holds no edge for."""
    edges: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        key = (str(r["src"]), str(r["dst"]))
        if key[0] in names and key[1] in names and (key not in edges or r["type"] == "CALLS"):
            edges[key] = {"type": str(r["type"]), "error_rate": number(r.get("error_rate")),
                          "p95_ms": number(r.get("p95_ms")), "source": str(r.get("source") or "?"),
                          "status": str(r.get("status") or "?")}  # fmt: skip
    for c in candidates:
        for path in c.get("paths") or ():
            for a, b in itertools.pairwise(path):
                pair = (str(a), str(b))
                if pair not in edges and pair[::-1] not in edges:
                    edges[pair] = {"type": "path", "error_rate": None, "p95_ms": None,
                                   "source": "plan", "status": "Candidate"}  # fmt: skip
    return [{"src": a, "dst": b, **e} for (a, b), e in sorted(edges.items())]


def number(value: Any) -> float | None:
    """A measurement as the graph returned it: a number, or None for anything else."""
    return float(value) if isinstance(value, int | float) else None


def blame_graph(detail: IncidentDetail, rows: Iterable[Mapping[str, Any]]) -> BlameGraph:
    """The drawn subgraph. Node size follows the candidate's plan score (its blame) relative
    to the top one; colour follows the hypothesis state the agent reached."""
    plan = detail.plan or {}
    anchor = plan.get("anchor")
    candidates = [dict(c) for c in (plan.get("candidates") or [])[:MAX_CANDIDATES]]
    rows = list(rows)
    layer = _layers(anchor, candidates)
    hyps = {h.suspect: h for h in detail.hypotheses}
    scores = {str(c["service"]): float(c["score"]) for c in candidates}
    ranks = {str(c["service"]): i + 1 for i, c in enumerate(candidates)}
    top = max(scores.values(), default=0.0) or 1.0
    kinds = _kinds(candidates, rows)
    placed: dict[str, Placed] = place(layer, {n: scores.get(n, 0.0) / top for n in layer})
    nodes = []
    for name, p in placed.items():
        hyp = hyps.get(name)
        role: Role = "symptom" if name == anchor else "candidate" if name in scores else "path"
        state = hyp.state if hyp else ("Candidate" if name in scores else None)
        nodes.append(BlameNode(name=name, text=name, kind=kinds.get(name, "Service"), role=role,
                               state=state, score=scores.get(name), rank=ranks.get(name),
                               confidence=hyp.confidence if hyp else None,
                               x=p.x, y=p.y, r=p.r))  # fmt: skip
    edges = []
    for e in _edges(candidates, rows, set(placed)):
        geometry = link(placed[e["src"]], placed[e["dst"]])
        edges.append(BlameEdge(**e, **geometry.model_dump(),
                               label=edge_label(e["error_rate"], e["p95_ms"])))  # fmt: skip
    width, height = extent(placed, {})
    return BlameGraph(anchor=anchor, nodes=nodes, edges=edges, width=width, height=height)


def edge_rows(reader: GraphStore, detail: IncidentDetail) -> list[dict[str, Any]]:
    """The graph's edges among the plan's names (one bounded, parameterised read; the names
    bind as a parameter, never as query text)."""
    plan = detail.plan or {}
    names = {str(plan["anchor"])} if plan.get("anchor") else set()
    for c in (plan.get("candidates") or [])[:MAX_CANDIDATES]:
        names.add(str(c["service"]))
        names.update(str(n) for p in c.get("paths") or () for n in p)
    if not names:
        return []
    return reader.read(cypher.load("web_blame_edges"), {"names": sorted(names), "limit": MAX_EDGES})


def graph_for(reader: GraphStore, detail: IncidentDetail) -> tuple[BlameGraph, str]:
    """The drawing, fail-open: without the graph's edges it still shows the plan's paths,
    and says why (the note)."""
    try:
        rows, note = edge_rows(reader, detail), ""
    except StoreError as exc:
        rows, note = [], f"edges not read from the graph: {exc}"
    return blame_graph(detail, rows), note
