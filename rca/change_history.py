"""Deploys, changes and past incidents of the candidates, read in one query: the changes
the change scorer times against the alert, and the history that is a prior."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from stackgraph import cypher
from stackgraph.store import GraphReader
from stackgraph.timetravel import at_params

from .clock import parse_time
from .facts import WIDEST, ChangeFact, Facts, HistoryFact, Request, num
from .neighbourhood import candidate_names
from .prefetch import prefetched
from .rows import str_or_none


def _changes_history(store: GraphReader, req: Request, facts: Facts) -> list[dict[str, Any]]:
    """Deploys, changes and incident history of the current candidates in one query."""
    names = candidate_names(facts)
    limit = 2 * WIDEST  # deploys and changes of every candidate, as for a plan of ten
    params = {
        "names": names,
        "anchor": facts.anchor,
        "limit": limit,
        "history": len(names),
        **at_params(req.as_of),
    }
    return prefetched(
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
                str_or_none(p.get("source")),
                str_or_none(p.get("status")),
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
                str(row["service"]),
                "Change",
                at,
                ref,
                str_or_none(p.get("source")),
                str_or_none(p.get("status")),
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
