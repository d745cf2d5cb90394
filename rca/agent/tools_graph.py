"""Graph-side tools: `query_stack_graph` (telemetry and deploys around a suspect) and
`memory_lookup` (incident memory; says so while it is not wired)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stackgraph.rca.graph_query import query_stack_graph

from .evidence import Verdict
from .toolbox import Prerequisite, Tool, ToolContext, ToolResult, ToolStatus, service_param

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
    support it; healthy measured calls into it refute it."""
    if result.status != ToolStatus.SUCCESS:
        return Verdict.INCONCLUSIVE
    inbound = [
        t for t in result.data.get("triples", [])
        if t["type"] == "CALLS" and t["dst"] == suspect and t["props"].get("status", "Active")
        == "Active"
    ]  # fmt: skip
    measured = [t for t in inbound if "error_rate" in t["props"] or "latency_p95_ms" in t["props"]]
    for t in measured:
        p = t["props"]
        if float(p.get("error_rate", 0)) >= ERROR_RATE_BAD:
            return Verdict.SUPPORTS
        if float(p.get("latency_p95_ms", 0)) >= P95_BAD_MS:
            return Verdict.SUPPORTS
    for t in result.data.get("triples", []):
        deployed = t["props"].get("deployed_at")
        if (
            t["type"] == "DEPLOYED"
            and t["dst"] == suspect
            and isinstance(deployed, int | float)
            and now - window_s <= float(deployed) <= now
        ):
            return Verdict.SUPPORTS
    if measured and all(
        float(t["props"].get("error_rate", 0)) < ERROR_RATE_OK
        and float(t["props"].get("latency_p95_ms", 0)) < P95_OK_MS
        for t in measured
    ):
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
    if ctx.memory is None:
        return ToolResult(ToolStatus.UNAVAILABLE, "memory not available")
    hits = ctx.memory(str(args["query"]), int(args.get("limit", 5)))
    if not hits:
        return ToolResult(ToolStatus.NO_DATA, "no similar past incident")
    lines = [str(h.get("summary") or h) for h in hits]
    return ToolResult(ToolStatus.SUCCESS, "; ".join(lines)[:2000], {"hits": list(hits)})


def _check_memory(result: ToolResult, suspect: str, now: float, window_s: float) -> Verdict:
    """A past incident root-caused by the same suspect supports it (a prior, not proof)."""
    for hit in result.data.get("hits", []):
        if str(hit.get("root_cause", "")) in {suspect, f"Service:{suspect}"}:
            return Verdict.SUPPORTS
    return Verdict.INCONCLUSIVE


def memory_tool() -> Tool:
    return Tool(
        name="memory_lookup",
        description="Search past incidents similar to this one (incident memory).",
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 20},
            },
            "required": ["query"],
        },
        run=_run_memory,
        check=_check_memory,
        source="Synthetic",
        timeout_s=10.0,
    )
