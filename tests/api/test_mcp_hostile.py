"""Hostile MCP lines (issue 17, row 16), written raw to a real `stackgraph mcp` subprocess:
every line with an id gets an answer (a JSON-RPC error for what cannot be served), tool
arguments are capped and checked, and the server keeps serving."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from typing import Any

import mcp_types

from stackgraph.config import Settings
from stackgraph.mcp_stdio import MAX_LINE_CHARS, screen
from stackgraph.store import GraphStore


def _call(ident: int, tool: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                       "params": {"name": tool, "arguments": arguments}})  # fmt: skip


def _run(settings: Settings, lines: list[str], ids: set[int], nulls: int) -> dict[Any, Any]:
    """Write the lines and read answers until every id in `ids` and `nulls` answers without
    one have come (stdin stays open meanwhile: at its end the server stops). A server that
    stops answering is killed after five minutes, so the test fails rather than hangs."""
    env = {**os.environ, "STACKGRAPH_FALKORDB_URL": str(settings.falkordb_url),
           "STACKGRAPH_GRAPH": settings.graph,
           "STACKGRAPH_DATA_DIR": str(settings.data_dir)}  # fmt: skip
    hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": mcp_types.LATEST_PROTOCOL_VERSION, "capabilities": {},
        "clientInfo": {"name": "hostile", "version": "0"}}}  # fmt: skip
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    text = "\n".join([json.dumps(hello), json.dumps(ready), *lines]) + "\n"
    proc = subprocess.Popen([sys.executable, "-m", "stackgraph", "mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    guard = threading.Timer(300, proc.kill)
    guard.start()
    answers: dict[Any, Any] = {None: []}
    try:
        proc.stdin.write(text.encode())
        proc.stdin.flush()
        while not (ids <= set(answers) and len(answers[None]) >= nulls):
            line = proc.stdout.readline()
            if not line:
                break
            message = json.loads(line)
            if message.get("id") is None:
                answers[None].append(message)
            else:
                answers[message["id"]] = message
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        guard.cancel()
        if proc.poll() is None:
            proc.kill()
    return answers


def test_every_bad_line_is_answered_and_the_server_keeps_serving(
    settings: Settings, platform: GraphStore
) -> None:
    lines = [
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {',  # not JSON
        _call(2, "query_stack_graph", {"service": "\ud800"}),  # a lone surrogate (escaped)
        "[" * 100_000 + "]" * 100_000,  # 100k deep
        _call(3, "query_stack_graph", {"service": "a\x00b"}),
        '{"id": 4, "hello": "not JSON-RPC"}',
        _call(5, "memory_lookup", {"query": "x" * 5_000_000}),  # a 5 MB line
        _call(6, "memory_lookup", {"query": "x" * 100_000}),  # under the line cap
        _call(7, "query_stack_graph", {"service": "x\x1b[2J"}),
        _call(8, "investigate", {"labels": {"service": "s" * 2000}}),
        '{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"x": "\\ud800"}}',
        _call(9, "query_stack_graph", {"service": "checkout"}),
    ]
    answers = _run(settings, lines, {0, 2, 3, 4, 6, 7, 8, 9}, nulls=3)
    assert answers[0]["result"]["serverInfo"]["name"] == "stackgraph"
    nulls = [m["error"]["code"] for m in answers[None]]
    assert nulls == [-32700, -32700, -32600]  # bad JSON, too deep, a 5 MB line (no id read)
    assert answers[2]["error"]["code"] == -32602
    assert "lone surrogate (U+D800)" in answers[2]["error"]["message"]
    assert answers[3]["error"]["code"] == -32602 and "NUL" in answers[3]["error"]["message"]
    assert answers[4]["error"]["code"] == -32600
    for ident, field in ((6, "query"), (7, "service"), (8, "labels")):
        result = answers[ident]["result"]
        assert result["isError"] is True, result
        assert field in result["content"][0]["text"], result
    ok = answers[9]["result"]
    assert not ok.get("isError") and ok["structuredContent"]["service"] == "checkout"
    assert set(answers) == {0, 2, 3, 4, 6, 7, 8, 9, None}  # 1 and 5 were unreadable


def test_screen_passes_what_the_library_reads() -> None:
    assert screen(_call(1, "query_stack_graph", {"service": "checkout"})) == "pass"
    assert screen('{"jsonrpc": "2.0", "method": "notifications/x", "params": {"a": "\\u0000"}}') \
        == "drop"  # fmt: skip
    big = screen(" " * (MAX_LINE_CHARS + 1))
    assert isinstance(big, mcp_types.JSONRPCError) and big.error.code == -32600
