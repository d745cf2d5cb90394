"""The anchor's neighbourhood in the graph: downstream paths within the clamped hop count
(`khop`) and direct callers (`callers`), read in one query, or, where it has neither, the
services of its namespace (`unlinked`); their nodes are the candidates."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from stackgraph import cypher
from stackgraph.store import GraphReader
from stackgraph.timetravel import at_params

from .facts import WIDEST, EdgeFact, Facts, Request
from .prefetch import prefetched
from .rows import edge_fact, node_fact

MIN_HOPS, MAX_HOPS = 1, 4
_MAX_PATHS_PER_NODE = 3


def clamp_hops(hops: int) -> int:
    """Hop counts outside 1..4 are clamped, never refused (hops=99 behaves as 4)."""
    try:
        h = int(hops)
    except (TypeError, ValueError):
        return 2
    return max(MIN_HOPS, min(MAX_HOPS, h))


def _neighbourhood(store: GraphReader, req: Request, anchor: str) -> list[dict[str, Any]]:
    """Downstream paths (kind 'path') and direct callers (kind 'caller') in one query."""
    hops = clamp_hops(req.hops)
    params = {
        "anchor": anchor,
        "limit": req.path_limit,
        "callers": WIDEST,
        **at_params(req.as_of),
    }
    return prefetched(
        store,
        req,
        ("neighbourhood", anchor, hops, req.path_limit),
        lambda: store.read(cypher.load(f"rca_neighbourhood_{hops}"), params),
    )


def khop(store: GraphReader, req: Request, facts: Facts) -> Facts:
    """The anchor's downstream neighbourhood within `hops` (clamped 1..4), bounded."""
    hops = clamp_hops(req.hops)
    rows = [r for r in _neighbourhood(store, req, facts.anchor) if r["kind"] == "path"]
    nodes = dict(facts.nodes)
    edges: dict[tuple[str, str, str], EdgeFact] = {(e.src, e.dst, e.type): e for e in facts.edges}
    paths: dict[str, list[tuple[str, ...]]] = {k: list(v) for k, v in facts.paths.items()}
    named = [(len(r["names"]), tuple(str(n) for n in r["names"]), r) for r in rows]
    named.sort(key=lambda x: (x[0], x[1]))  # shortest paths first, then by name
    for length, names, r in named:
        target = names[-1]
        if target == facts.anchor or len(set(names)) < length:
            continue
        a, b = names[-2], target  # every edge in reach ends some path: the paths' last edges
        key = (a, b, str(r["type"]))
        if key not in edges:
            edges[key] = edge_fact(a, b, r)
        if target not in nodes:
            nodes[target] = node_fact(target, r, depth=length - 1)
        known = paths.setdefault(target, [])
        if len(known) < _MAX_PATHS_PER_NODE and names not in known:
            known.append(names)
    notes: list[str] = []
    if len(rows) >= req.path_limit:
        notes.append(f"neighbourhood truncated at {req.path_limit} paths ({hops} hops)")
    return replace(
        facts,
        nodes=nodes,
        edges=tuple(edges.values()),
        paths={k: tuple(v) for k, v in paths.items()},
        notes=facts.note(*notes),
    )


def callers(store: GraphReader, req: Request, facts: Facts) -> Facts:
    """The anchor's direct callers: an upstream cause (a retry storm, a bad client)."""
    rows = [r for r in _neighbourhood(store, req, facts.anchor) if r["kind"] == "caller"]
    nodes = dict(facts.nodes)
    edges = list(facts.edges)
    paths = dict(facts.paths)
    have = {(e.src, e.dst, e.type) for e in edges}
    for r in rows:
        name = str(r["names"][-1])
        if (name, facts.anchor, "CALLS") not in have:
            edges.append(edge_fact(name, facts.anchor, r))
        if name not in nodes:
            nodes[name] = node_fact(name, r, depth=1, position="upstream")
            paths[name] = ((facts.anchor, name),)
    return replace(facts, nodes=nodes, edges=tuple(edges), paths=paths)


def unlinked(store: GraphReader, req: Request, facts: Facts) -> Facts:
    """Where the graph links the anchor to nothing (no call known in or out of it: a
    platform with no tracing, a service no tracer instruments), the services of its
    namespace: the graph cannot say what the alert depends on, so it clears none of them;
    each is judged on its own signals. Where the anchor has a neighbourhood, nothing is
    added: the graph places the rest of the namespace away from this alert (and a service
    with no call of its own there is, most often, one no traffic reached)."""
    if any(n != facts.anchor for n in facts.nodes):
        return facts
    params = {"anchor": facts.anchor, "limit": WIDEST, **at_params(req.as_of)}
    rows = store.read(cypher.load("rca_unlinked"), params)
    if not rows:
        return facts
    nodes = dict(facts.nodes)
    for r in rows:
        name = str(r["name"])
        nodes[name] = node_fact(name, r, depth=0, position="unlinked")
    namespace = rows[0]["namespace"]
    where = f"of its namespace {namespace}" if namespace else "(it names no namespace)"
    notes = [
        f"the graph links {facts.anchor} to nothing: the {len(rows)} other service(s) {where} "
        "are candidates, judged on their own signals"
    ]
    if len(rows) >= WIDEST:
        notes.append(f"the namespace's services truncated at {WIDEST}, in name order")
    return replace(facts, nodes=nodes, notes=facts.note(*notes))


def candidate_names(facts: Facts) -> list[str]:
    return sorted({facts.anchor, *facts.nodes})
