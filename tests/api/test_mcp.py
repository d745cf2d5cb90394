"""`stackgraph mcp` answers MCP clients over stdio (a real subprocess, a real graph)."""

from __future__ import annotations

import asyncio
import os
import sys

from mcp import Client, StdioServerParameters

from stackgraph.config import Settings
from stackgraph.ingest import GraphIngestor
from stackgraph.memory import IncidentOutcome, offline_embedder, open_memory, record_episode
from stackgraph.store import GraphStore


def test_query_stack_graph_over_stdio(settings: Settings, platform: GraphStore) -> None:
    past = IncidentOutcome("fp-mcp", "checkout", "checkout 5xx errors above 5%", 100.0,
                           alert="HighErrorRate", root_cause="payment")  # fmt: skip
    with GraphIngestor(platform, who="test") as writer:
        record_episode(writer, past, open_memory(platform, offline_embedder()))
    env = {
        **os.environ,
        "STACKGRAPH_FALKORDB_URL": str(settings.falkordb_url),
        "STACKGRAPH_GRAPH": settings.graph,
        "STACKGRAPH_DATA_DIR": str(settings.data_dir),
    }
    params = StdioServerParameters(command=sys.executable, args=["-m", "stackgraph", "mcp"],
                                   env=env)  # fmt: skip

    async def main() -> None:
        async with Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {"query_stack_graph", "investigate", "memory_lookup"}
            res = await client.call_tool("query_stack_graph", {"service": "checkout"})
            assert not res.is_error
            sentences = res.structured_content["sentences"]
            assert any(s.startswith("checkout calls payment (error rate 12%") for s in sentences)
            paths = await client.call_tool("query_stack_graph",
                                           {"service": "frontend", "other": "payment"})  # fmt: skip
            assert paths.structured_content["paths"] == [["frontend", "checkout", "payment"]]
            memory = await client.call_tool("memory_lookup", {"query": "checkout 5xx errors",
                                                              "service": "checkout"})  # fmt: skip
            found = memory.structured_content
            assert found["available"] is True and found["status"] == "success"
            assert found["hits"][0]["incident"] == "fp-mcp"
            assert found["hits"][0]["root_cause"] == "payment" and found["hits"][0]["why"]
            before = await client.call_tool("memory_lookup", {"query": "checkout 5xx errors",
                                                              "known_at": 1.0})  # fmt: skip
            assert before.structured_content["status"] == "no_data"
            plan = await client.call_tool("investigate", {"labels": {"service": "checkout"}})
            assert "candidates" in plan.structured_content

    asyncio.run(main())
