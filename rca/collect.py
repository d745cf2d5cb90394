"""Candidate generators: the only parts of the read path that read the store (read-only).

Each generator is `(store, request, facts) -> facts`: it adds what it found and notes
what it could not find. Queries are the `rca_*` templates in `cypher/`; values bind as
parameters, hop counts pick one template from the clamped set 1..4.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from stackgraph import cypher
from stackgraph.errors import SourceUnavailable
from stackgraph.store import GraphReader
from stackgraph.timetravel import at_params

from .anchor import anchor_names
from .clock import parse_time
from .facts import (
    ChangeFact,
    EdgeFact,
    Facts,
    HistoryFact,
    NodeFact,
    ProbeSeries,
    Request,
    Windows,
    num,
)
from .model import Alert, MetricsSource

if TYPE_CHECKING:
    from stackgraph.ingest.lanes.telemetry import Span

MIN_HOPS, MAX_HOPS = 1, 4
_MAX_PATHS_PER_NODE = 3


Generator = Callable[[GraphReader, Request, Facts], Facts]


def clamp_hops(hops: int) -> int:
    """Hop counts outside 1..4 are clamped, never refused (hops=99 behaves as 4)."""
    try:
        h = int(hops)
    except (TypeError, ValueError):
        return 2
    return max(MIN_HOPS, min(MAX_HOPS, h))


def _node(name: str, row: Mapping[str, Any], **kw: Any) -> NodeFact:
    """A node from a row of scalars (criticality, source, status, last_seen, degrees)."""
    crit = row.get("criticality")
    return NodeFact(
        name=name,
        label=str(row.get("label") or "Service"),
        criticality=crit if isinstance(crit, str) else None,
        fan_in=int(num(row.get("fan_in")) or 0),
        fan_out=int(num(row.get("fan_out")) or 0),
        source=_str(row.get("source")),
        status=_str(row.get("status")),
        last_seen=num(row.get("last_seen")),
        **kw,
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _clean(v: Any, lo: float = 0.0, hi: float = math.inf) -> float | None:
    x = num(v)
    if x is None or not math.isfinite(x):
        return None
    return min(max(x, lo), hi)


def _edge(src: str, dst: str, row: Mapping[str, Any]) -> EdgeFact:
    """An edge from a row of scalars (telemetry + provenance prefixed `e_`)."""
    clean = _clean
    return EdgeFact(
        src=src,
        dst=dst,
        type=str(row.get("type") or "CALLS"),
        trace_count=clean(row.get("trace_count")),
        error_rate=clean(row.get("error_rate"), 0.0, 1.0),
        latency_p95_ms=clean(row.get("latency_p95_ms")),
        source=_str(row.get("e_source")),
        status=_str(row.get("e_status")),
        last_seen=num(row.get("e_last_seen")),
    )


def resolve_anchor(
    store: GraphReader, alert: Alert, at: float | None = None
) -> tuple[NodeFact | None, str]:
    """The Service the alert fired on (in the graph as it was at `at`; None: now), or None
    with the reason. Label priority: service > app > job > pod (hash suffixes dropped) >
    a Deployment of that name."""
    names = anchor_names(alert.labels)
    if not names:
        return None, "the alert names no service (labels service/app/job/pod are all absent)"
    when = at_params(at)
    rows = store.read(
        cypher.load("rca_anchor_services"), {"names": names, "limit": len(names), **when}
    )
    found = {str(r["name"]): r for r in rows}
    for name in names:
        if name in found:
            return _node(name, found[name], position="anchor"), ""
    rows = store.read(cypher.load("rca_anchor_deployments"), {"names": names, "limit": 10, **when})
    services = sorted({str(r["service"]) for r in rows if r.get("service")})
    if services:
        again = store.read(
            cypher.load("rca_anchor_services"), {"names": services, "limit": 10, **when}
        )
        if again:
            return _node(str(again[0]["name"]), again[0], position="anchor"), ""
    return None, f"no Service or Deployment in the graph matches {names[:4]!r}"


def _prefetched(
    store: GraphReader, req: Request, key: tuple[Any, ...], load: Callable[[], list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Rows one combined query read for this request, shared by the generators that need
    parts of them (khop + callers, changes + history): one round trip instead of two.

    Kept per request (dropped with it), so two investigations never share rows."""
    try:
        slot = _PREFETCH[id(req)]
    except KeyError:
        slot = _PREFETCH[id(req)] = {}
        try:
            weakref.finalize(req, _PREFETCH.pop, id(req), None)
        except TypeError:  # not weak-referenceable: read without sharing
            del _PREFETCH[id(req)]
            return load()
    full_key = (id(store), *key)
    rows = slot.get(full_key)
    if rows is None:
        rows = slot[full_key] = load()
    return rows


_PREFETCH: dict[int, dict[tuple[Any, ...], list[dict[str, Any]]]] = {}


def _neighbourhood(store: GraphReader, req: Request, anchor: str) -> list[dict[str, Any]]:
    """Downstream paths (kind 'path') and direct callers (kind 'caller') in one query."""
    hops = clamp_hops(req.hops)
    params = {
        "anchor": anchor,
        "limit": req.path_limit,
        "callers": req.limit * 5,
        **at_params(req.as_of),
    }
    return _prefetched(
        store,
        req,
        ("neighbourhood", anchor, hops, req.path_limit, req.limit),
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
            edges[key] = _edge(a, b, r)
        if target not in nodes:
            nodes[target] = _node(target, r, depth=length - 1)
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
            edges.append(_edge(name, facts.anchor, r))
        if name not in nodes:
            nodes[name] = _node(name, r, depth=1, position="upstream")
            paths[name] = ((facts.anchor, name),)
    return replace(facts, nodes=nodes, edges=tuple(edges), paths=paths)


def candidate_names(facts: Facts) -> list[str]:
    return sorted({facts.anchor, *facts.nodes})


def _changes_history(store: GraphReader, req: Request, facts: Facts) -> list[dict[str, Any]]:
    """Deploys, changes and incident history of the current candidates in one query."""
    names = candidate_names(facts)
    limit = max(50, req.limit * 10)
    params = {
        "names": names,
        "anchor": facts.anchor,
        "limit": limit,
        "history": len(names),
        **at_params(req.as_of),
    }
    return _prefetched(
        store,
        req,
        ("changes_history", facts.anchor, limit, *names),
        lambda: store.read(cypher.load("rca_changes_history"), params),
    )


def deploy_ref(props: Mapping[str, Any]) -> str:
    """What a human recognises a rollout by: its image (or version); for a HelmRelease
    the chart and chart version, for a Kustomization its name, each with the source
    revision it carries; the release digest only when nothing else is known."""
    image = props.get("image") or props.get("version")
    if image:
        return str(image)
    chart = str(props.get("chart_version") or "")
    parts: list[str] = []
    if chart:
        parts.append(f"{props.get('chart_name') or 'chart'} {chart}")
    elif props.get("kustomization"):
        parts.append(str(props["kustomization"]))
    short = str(props.get("revision") or "")[:12]
    if short and short[:7] not in chart:  # "1.9.2+a9fae1a5b2e5" already names it
        parts.append(f"revision {short}")
    return ", ".join(parts) or str(props.get("image_digest") or "?")


def changes(store: GraphReader, req: Request, facts: Facts) -> Facts:
    """Deploys and changes of any candidate (time-filtered by the change scorer)."""
    out = list(facts.changes)
    rows = _changes_history(store, req, facts)
    for row in rows:
        if row["kind"] != "deploy":
            continue
        p = row["props"] or {}
        at = parse_time(p.get("deployed_at"))
        if at is None:
            continue
        out.append(
            ChangeFact(
                str(row["service"]),
                "Deploy",
                at,
                deploy_ref(p),
                _str(p.get("source")),
                _str(p.get("status")),
            )
        )
    seen: set[tuple[str, Any, Any]] = set()
    for row in rows:
        if row["kind"] != "change":
            continue
        p = row["props"] or {}
        # A Change that touched the service and one of its code units comes back once
        # per path (CHANGED → Service, CHANGED → CodeUnit → Service): count it once.
        ident = (str(row["service"]), p.get("repo"), p.get("commit_sha"))
        if ident in seen:
            continue
        seen.add(ident)
        at = None
        for key in ("merged_at", "committed_at", "authored_at", "at", "timestamp"):
            at = parse_time(p.get(key))
            if at is not None:
                break
        if at is None:
            continue
        ref = f"{p.get('repo', '?')}@{str(p.get('commit_sha', '?'))[:12]}"
        out.append(
            ChangeFact(
                str(row["service"]), "Change", at, ref, _str(p.get("source")), _str(p.get("status"))
            )
        )
    return replace(facts, changes=tuple(out))


def history(store: GraphReader, req: Request, facts: Facts) -> Facts:
    """Past incidents root-caused by a candidate: a prior, never proof. Only Active
    ROOT_CAUSED_BY edges count (not Deprecated by feedback, not shadow Candidates), and at
    `req.as_of` only those the graph held then."""
    hist = dict(facts.history)
    for r in _changes_history(store, req, facts):
        if r["kind"] != "history":
            continue
        name = str(r["service"])
        hist[name] = HistoryFact(
            name,
            int(num(r["incidents"]) or 0),
            int(num(r["on_anchor"]) or 0),
            num(r.get("confidence")),
            num(r.get("last_seen")),
        )
    return replace(facts, history=hist)


def probes(store: GraphReader, req: Request, facts: Facts) -> Facts:
    """Each candidate's own metrics in the alert and baseline windows, via MetricsSource.

    Reads metrics, not the graph. A failing probe is a note and the others still count;
    an unreachable source is noted once and not asked again for this plan.
    """
    metrics = req.metrics
    if metrics is None:
        return replace(facts, notes=facts.note("no metrics source: live probes skipped"))
    source = str(getattr(metrics, "source_name", type(metrics).__name__))
    out: dict[str, list[ProbeSeries]] = {k: list(v) for k, v in facts.probes.items()}
    notes: list[str] = []
    names = candidate_names(facts)
    for i, name in enumerate(names):
        try:
            for kind in metrics.kinds(name, req.windows.baseline[0], req.windows.alert[1]):
                probe = _probe(metrics, name, str(kind), req.windows)
                if probe is not None:
                    out.setdefault(name, []).append(probe)
        except SourceUnavailable as exc:
            notes.append(
                f"metrics source unavailable, {len(names) - i} candidate(s) not probed: {exc}"
            )
            break
        except Exception as exc:  # a probe is a remote call; any failure leaves a partial plan
            notes.append(f"metrics probe for {name!r} failed: {type(exc).__name__}: {exc}")
    return replace(
        facts,
        probes={k: tuple(v) for k, v in out.items()},
        probe_source=source,
        notes=facts.note(*notes),
    )


def _probe(metrics: MetricsSource, name: str, kind: str, win: Windows) -> ProbeSeries | None:
    """One kind of one service in both windows: baseline [b0, b1), alert [a0, a1]. One
    query covers both when they touch (the default), two when a gap lies between."""
    (a0, a1), (b0, b1) = win.alert, win.baseline
    if b1 >= a0:
        both = _finite(metrics.points(name, kind, b0, a1))
        base = [v for t, v in both if b0 <= t < min(b1, a0)]
        alert = [(t, v) for t, v in both if t >= a0]
    else:
        base = [v for t, v in _finite(metrics.points(name, kind, b0, b1)) if t < b1]
        alert = list(_finite(metrics.points(name, kind, a0, a1)))
    if not base or not alert:
        return None
    group, _, series = kind.partition("/")
    return ProbeSeries(group, series or group, tuple(base), tuple(v for _, v in alert),
                       tuple(t for t, _ in alert))  # fmt: skip


def _finite(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for t, v in points:
        x, when = num(v), num(t)
        if x is not None and when is not None and math.isfinite(x):
            out.append((when, x))
    return out


def logs(store: GraphReader, req: Request, facts: Facts) -> Facts:
    """Each candidate's log lines in the baseline and alert windows, via LogSource. Reads
    logs, not the graph; an unreachable source is noted once and not asked again."""
    source = req.logs
    if source is None:
        return replace(facts, notes=facts.note("no log source: log lines not read"))
    (a0, a1), (b0, b1) = req.windows.alert, req.windows.baseline
    out = dict(facts.logs)
    notes: list[str] = []
    names = candidate_names(facts)
    for i, name in enumerate(names):
        try:
            base = tuple(x for x in source.lines(name, b0, b1) if x.t < b1)
            alert = tuple(source.lines(name, a0, a1))
        except SourceUnavailable as exc:
            notes.append(f"log source unavailable, {len(names) - i} candidate(s) not read: {exc}")
            break
        except Exception as exc:  # a remote call; a failure leaves a partial plan
            notes.append(f"log lines of {name!r} failed: {type(exc).__name__}: {exc}")
            continue
        if base or alert:
            out[name] = (base, alert)
    return replace(facts, logs=out, notes=facts.note(*notes))


def around(spans: Sequence[Span], names: set[str]) -> tuple[Span, ...]:
    """The spans of `names` and the spans one call away from them (their parents and
    children in other services): every call into or out of a candidate, and no more, so a
    plan's trace work grows with its neighbourhood, not with the whole system's traffic."""
    mine = {(s.trace_id, s.span_id) for s in spans if s.service in names}
    parents = {(s.trace_id, s.parent_id) for s in spans if s.service in names and s.parent_id}
    return tuple(
        s for s in spans
        if (s.trace_id, s.span_id) in mine or (s.trace_id, s.span_id) in parents
        or (s.trace_id, s.parent_id) in mine
    )  # fmt: skip


def traces(store: GraphReader, req: Request, facts: Facts) -> Facts:
    """The spans around the candidates (`around`) in the baseline and alert windows, via
    SpanSource."""
    source = req.spans
    if source is None:
        return replace(facts, notes=facts.note("no span source: trace structure not read"))
    (a0, a1), (b0, b1) = req.windows.alert, req.windows.baseline
    names = set(candidate_names(facts))
    try:
        base = around([s for s in source.spans(b0, b1) if s.end_s < b1], names)
        alert = around(source.spans(a0, a1), names)
    except Exception as exc:  # a source is outside the graph; its failure leaves a partial plan
        return replace(facts, notes=facts.note(f"spans failed: {type(exc).__name__}: {exc}"))
    return replace(facts, traces=(base, alert))


GENERATORS: dict[str, Generator] = {
    "khop": khop,
    "callers": callers,
    "changes": changes,
    "history": history,
    "probes": probes,
    "logs": logs,
    "traces": traces,
}
"""Named generators a playbook may list, in the order it lists them."""
