"""`stackgraph mcp`: the MCP server (stdio) exposing `query_stack_graph`, `investigate` and
`memory_lookup`. Tools return TypedDicts so clients get structured content.

The store is opened on first use, not at import or start, so the server answers
`list_tools` even before FalkorDB is reachable. Arguments are capped and their text checked
like the HTTP API's (`stackgraph.inputs`): a bad one is a tool error naming it, before any
query runs. `stackgraph.mcp_stdio` serves it, answering lines the library would not.
"""

from __future__ import annotations

import threading
from typing import Annotated, Any

from mcp.server import MCPServer
from pydantic import Field
from typing_extensions import TypedDict

from stackgraph.config import Settings
from stackgraph.inputs import Annotations, Question, ServiceName, SomeLabels
from stackgraph.rca import Alert, Planner
from stackgraph.rca.graph_query import GraphAnswer, query_stack_graph
from stackgraph.store import GraphStore

Hops = Annotated[int, Field(ge=1, le=4)]
Epoch = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class PlanAnswer(TypedDict):
    anchor: str | None
    reason: str
    candidates: list[dict[str, Any]]


class MemoryAnswer(TypedDict):
    available: bool
    status: str
    """success | no_data | error | unavailable"""
    message: str
    hits: list[dict[str, Any]]


def build_server(settings: Settings) -> MCPServer:
    server = MCPServer("stackgraph")
    lock = threading.Lock()
    opened: list[GraphStore] = []
    memories: list[Any] = []
    planner = Planner.from_settings(settings)

    def store() -> GraphStore:
        with lock:
            if not opened:
                opened.append(GraphStore.open(settings))
            return opened[0]

    def memory() -> Any:
        """The incident memory, opened once on first use (like the store)."""
        from stackgraph.memory import memory_for

        st = store()
        with lock:
            if not memories:
                memories.append(memory_for(settings, st))
            return memories[0]

    @server.tool(name="query_stack_graph")
    def query_stack_graph_tool(
        service: ServiceName, other: ServiceName | None = None, hops: Hops = 1, raw: bool = False
    ) -> GraphAnswer:
        """A service's neighbourhood (who calls it, what it calls, with error rate, p95 and
        provenance), or the paths between `service` and `other`, as sentences."""
        return query_stack_graph(store(), service, other, hops=hops, raw=raw)

    @server.tool(name="investigate")
    def investigate_tool(
        labels: SomeLabels, annotations: Annotations | None = None, hops: Hops | None = None,
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
    ) -> PlanAnswer:  # fmt: skip
        """Rank likely root causes for an alert (its labels, e.g. service, alertname), with
        live metrics when Prometheus is configured. `hops` defaults to investigate_hops."""
        plan = planner(store(), Alert(labels, annotations or {}), hops=hops, limit=limit)
        data = plan.to_dict()
        return PlanAnswer(anchor=data["anchor"], reason=data["reason"],
                          candidates=list(data["candidates"]))  # fmt: skip

    @server.tool(name="memory_lookup")
    def memory_lookup_tool(
        query: Question, service: ServiceName | None = None,
        limit: Annotated[int, Field(ge=1, le=100)] = 5, as_of: Epoch | None = None,
        known_at: Epoch | None = None,
    ) -> MemoryAnswer:  # fmt: skip
        """Past incidents similar to `query` (symptom, alert, service), with their root cause
        and why each matched. `as_of` / `known_at` (epoch seconds): what was true / known."""
        from stackgraph.memory import memory_lookup

        try:
            mem = memory()
        except Exception as exc:  # no memory is an answer, not a crash of the server
            return MemoryAnswer(available=False, status="unavailable",
                                message=f"memory not available: {exc}", hits=[])  # fmt: skip
        found = memory_lookup(store(), query, memory=mem, service=service, limit=limit,
                              as_of=as_of, known_at=known_at)  # fmt: skip
        data = found.to_dict()
        return MemoryAnswer(available=True, status=data["status"], message=data["message"],
                            hits=list(data["hits"]))  # fmt: skip

    return server
