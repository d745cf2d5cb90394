"""`stackgraph mcp` answers MCP clients over stdio (a real subprocess, a real graph)."""

from __future__ import annotations

import asyncio
import os
import sys

from mcp import Client, StdioServerParameters

from stackgraph.config import Settings
from stackgraph.store import GraphStore


def test_query_stack_graph_over_stdio(settings: Settings, platform: GraphStore) -> None:
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
            memory = await client.call_tool("memory_lookup", {"query": "checkout errors"})
            assert memory.structured_content["message"] == "memory not available"
            plan = await client.call_tool("investigate", {"labels": {"service": "checkout"}})
            assert "candidates" in plan.structured_content

    asyncio.run(main())
