"""Graph-side tools: `query_stack_graph` (telemetry and deploys around a suspect) and
`memory_lookup` (incident memory; "memory not available" when the service has none)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stackgraph.rca.graph_query import query_stack_graph

from .evidence import Verdict, optional_number
from .toolbox import Prerequisite, Tool, ToolContext, ToolResult, ToolStatus, recent, service_param

ERROR_RATE_BAD = 0.05
ERROR_RATE_OK = 0.01
P95_BAD_MS = 1000.0
P95_OK_MS = 500.0


def _run_graph(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    answer = query_stack_graph(
        ctx.store,
        args["service"],
        args.get("other"),
        hops=int(args.get("hops", 1)),
        raw=True,
        now=ctx.now(),
        ages=False,
    )
    if answer["reason"] and not answer["sentences"]:
        return ToolResult(ToolStatus.NO_DATA, answer["reason"], dict(answer))
    text = "; ".join(answer["sentences"][:12])
    more = len(answer["sentences"]) - 12
    return ToolResult(
        ToolStatus.SUCCESS, text + (f"; ... {more} more" if more > 0 else ""), dict(answer)
    )


def _check_graph(result: ToolResult, suspect: str, now: float, window_s: float) -> Verdict:
    """Calls into the suspect failing or slow, or a deploy of it just before the alert,
    support it; calls into it healthy in both failures and p95 refute it (an edge lacks a
    figure nobody measured: no error rate where spans carry no status, no p95 without a
    latency histogram, and half a measure is no health). A suspect whose own calls out fail
    at least as badly only passes the failure on (the frontier rule the ranking uses too),
    so its failing inbound calls are not evidence against it."""
    if result.status != ToolStatus.SUCCESS:
        return Verdict.INCONCLUSIVE
    triples = result.data.get("triples", [])

    def active_calls(end: str) -> list[dict[str, Any]]:
        return [
            t for t in triples
            if t["type"] == "CALLS" and t[end] == suspect
            and t["props"].get("status", "Active") == "Active"
            and ("error_rate" in t["props"] or "latency_p95_ms" in t["props"])
        ]  # fmt: skip

    measured, outbound = active_calls("dst"), active_calls("src")
    worst_out_errors = max((float(t["props"].get("error_rate", 0)) for t in outbound), default=0.0)
    worst_out_p95 = max((float(t["props"].get("latency_p95_ms", 0)) for t in outbound), default=0.0)
    for t in measured:
        p = t["props"]
        errors, p95 = float(p.get("error_rate", 0)), float(p.get("latency_p95_ms", 0))
        if errors >= ERROR_RATE_BAD and worst_out_errors < errors:
            return Verdict.SUPPORTS
        if p95 >= P95_BAD_MS and worst_out_p95 < p95:
            return Verdict.SUPPORTS
    for t in result.data.get("triples", []):
        deployed = t["props"].get("deployed_at")
        if (
            t["type"] == "DEPLOYED"
            and t["dst"] == suspect
            and isinstance(deployed, int | float)
            and recent(float(deployed), now, window_s)
        ):
            return Verdict.SUPPORTS
    if measured and all(
        "error_rate" in t["props"] and "latency_p95_ms" in t["props"]  # unmeasured: no health
        and float(t["props"]["error_rate"]) < ERROR_RATE_OK
        and float(t["props"]["latency_p95_ms"]) < P95_OK_MS
        for t in measured
    ):  # fmt: skip
        return Verdict.REFUTES
    return Verdict.INCONCLUSIVE


def graph_tool() -> Tool:
    return Tool(
        name="query_stack_graph",
        description=(
            "Read the world-model graph around a service: who calls it, what it calls, with "
            "measured error rate and p95 latency from traces, and recent deploys. Give "
            "`other` to get the paths between two services."
        ),
        parameters={
            "type": "object",
            "properties": {
                "service": service_param(),
                "other": {"type": "string", "description": "A second service.", "format": "name"},
                "hops": {"type": "integer", "minimum": 1, "maximum": 4, "description": "1-4"},
            },
            "required": ["service"],
        },
        run=_run_graph,
        check=_check_graph,
        source="Tempo",
        prerequisites=(Prerequisite("a graph store", lambda c: c.store is not None),),
        timeout_s=15.0,
    )


def _run_memory(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    """`stackgraph.memory.memory_lookup` over the memory the service opened (ctx.memory);
    searched from the alert's service, so graph proximity starts where the symptom is."""
    if ctx.memory is None:
        return ToolResult(ToolStatus.UNAVAILABLE, "memory not available")
    from stackgraph.memory import memory_lookup

    limit = int(args.get("limit", 5))
    found = memory_lookup(
        ctx.store, str(args["query"]), memory=ctx.memory, service=_alert_service(ctx),
        limit=limit + 1, as_of=optional_number(args.get("as_of")),
        known_at=optional_number(args.get("known_at")),
    )  # fmt: skip
    # This incident's own earlier episode (a re-run, a re-fire) would confirm itself.
    own = str(ctx.alert.fingerprint or "") if ctx.alert is not None else ""
    hits = [h.to_dict() for h in found.hits if not own or h.incident != own][:limit]
    if found.status == "success" and not hits:
        return ToolResult(ToolStatus.NO_DATA, "no similar past incident in memory", {"hits": []})
    status = {"success": ToolStatus.SUCCESS, "no_data": ToolStatus.NO_DATA}.get(
        found.status, ToolStatus.ERROR
    )
    lines = [found.message] + [
        f"{h['incident']} on {h['service']}: {h['symptom']} (root cause: "
        f"{h['root_cause'] or 'unknown'})"
        for h in hits
    ]
    return ToolResult(status, "; ".join(lines)[:2000], {"hits": hits})


def _alert_service(ctx: ToolContext) -> str | None:
    if ctx.alert is None:
        return None
    labels = dict(ctx.alert.labels)
    return labels.get("service") or labels.get("job") or labels.get("app") or None


def _check_memory(result: ToolResult, suspect: str, now: float, window_s: float) -> Verdict:
    """A similar past incident whose root cause was this suspect supports it (a prior,
    not proof); anything else says nothing about it."""
    if result.status != ToolStatus.SUCCESS:
        return Verdict.INCONCLUSIVE
    for hit in result.data.get("hits", []):
        if str(hit.get("root_cause", "")).strip().lower() in {
            suspect.lower(),
            f"service:{suspect.lower()}",
        }:
            return Verdict.SUPPORTS
    return Verdict.INCONCLUSIVE


def alert_query(ctx: ToolContext) -> str:
    """The alert as a memory question: its name, its service and its summary."""
    if ctx.alert is None:
        return "incident"
    labels = dict(ctx.alert.labels)
    service = _alert_service(ctx)
    query = " ".join(
        x for x in (labels.get("alertname", ""), f"on {service}" if service else "",
                    str(ctx.alert.annotations.get("summary", ""))) if x
    )  # fmt: skip
    return query or "incident"


def similar_incidents(ctx: ToolContext, limit: int = 3) -> tuple[list[dict[str, Any]], str]:
    """Past incidents like the alert, for the report (no LLM): (hits, note). The alert's
    own incident is left out; a failure is a note, never an exception."""
    if ctx.memory is None or ctx.alert is None:
        return [], ""
    from stackgraph.memory import search

    try:
        hits = search(ctx.store, alert_query(ctx), memory=ctx.memory,
                      service=_alert_service(ctx), limit=limit,
                      exclude=[str(ctx.alert.fingerprint or "")])  # fmt: skip
    except Exception as exc:  # the report is written with or without the memory
        return [], f"memory search failed: {type(exc).__name__}: {exc}"
    return [h.to_dict() for h in hits], ""


def memory_tool() -> Tool:
    return Tool(
        name="memory_lookup",
        description=(
            "Search past incidents similar to this one (incident memory): their root cause "
            "and resolution. Supports `service` when a similar incident was caused by it."
        ),
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Symptom, alert, service."},
                "service": service_param(),
                "limit": {"type": "integer", "minimum": 1, "maximum": 20},
                "as_of": {"type": "number", "description": "What was true then (epoch s)."},
                "known_at": {"type": "number", "description": "What was known then."},
            },
            "required": ["query"],
        },
        run=_run_memory,
        check=_check_memory,
        source="Synthetic",
        timeout_s=10.0,
    )
