"""MCP over stdio that answers every line.

The mcp library's stdio reader (mcp 2.3) hands a line it cannot parse to the server as an
exception, which the server logs and does not answer: a client that sent malformed JSON, a
request holding a lone surrogate, or JSON nested 100k deep waits forever. Here each line is
screened first and such a line gets the JSON-RPC 2.0 error the spec names (-32700 parse
error, -32600 invalid request, -32602 invalid params), with the request's id when it has
one; a notification gets no answer, as the spec says. Lines that pass are parsed by the
library as before. (To report upstream: the stdio transport should answer these itself.)

    anyio.run(serve_stdio, build_server(settings))      # what `stackgraph mcp` runs
"""

from __future__ import annotations

import json
import logging
import math
import sys
from collections.abc import AsyncIterator
from io import TextIOWrapper
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.server import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from stackgraph.schema import text_problem

log = logging.getLogger(__name__)

MAX_LINE_CHARS = 1 << 20
"""One JSON-RPC message; the tools' own arguments are capped far below this."""


def _request_id(message: Any) -> str | int | None:
    ident = message.get("id") if isinstance(message, dict) else None
    return ident if isinstance(ident, str | int) and not isinstance(ident, bool) else None


def _bad_text(message: Any) -> str | None:
    """The first string (key or value) holding a NUL or a lone surrogate, walked without
    recursion (the depth is the sender's choice)."""
    stack = [message]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            problem = text_problem(item, controls=False)
            if problem:
                return problem
    return None


def _error(ident: str | int | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=ident,
                              error=types.ErrorData(code=code, message=message))  # fmt: skip


def screen(line: str) -> types.JSONRPCError | Literal["pass", "drop"]:
    """Whether to pass the line on, answer it (the error), or drop it (a notification)."""
    if len(line) > MAX_LINE_CHARS:
        return _error(None, types.INVALID_REQUEST,
                      f"Invalid request: a line over {MAX_LINE_CHARS} characters")  # fmt: skip
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python parses
        return _error(None, types.PARSE_ERROR, "Parse error: not a JSON text")
    ident = _request_id(message)
    problem = _bad_text(message)
    if problem is None:
        try:
            types.jsonrpc_message_adapter.validate_python(message, by_name=False)
            return "pass"
        except ValidationError:
            reply = _error(
                ident, types.INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message"
            )
    else:
        reply = _error(ident, types.INVALID_PARAMS, f"Invalid params: a string {problem}")
    if ident is None and isinstance(message, dict) and "method" in message and "id" not in message:
        log.warning("dropped a notification: %s", reply.error.message)
        return "drop"  # JSON-RPC answers no notification, not even an invalid one
    return reply


class _Screened:
    """stdin's lines, less those `screen` answers (their errors go to `errors`)."""

    def __init__(self, lines: Any, errors: Any) -> None:
        self.lines = lines
        self.errors = errors

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self.lines:
            verdict = screen(line)
            if verdict == "pass":
                yield line
            elif verdict != "drop":
                await self.errors.send(SessionMessage(verdict))


async def serve_stdio(server: MCPServer) -> None:
    """Serve `server` on this process's stdin and stdout until stdin ends."""
    wrapper = TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    send, receive = anyio.create_memory_object_stream[SessionMessage](math.inf)
    stdin: Any = _Screened(anyio.wrap_file(wrapper), send)
    lowlevel = server._lowlevel_server  # MCPServer runs no other streams (mcp 2.3)
    try:
        async with stdio_server(stdin=stdin) as (read, write), anyio.create_task_group() as tg:

            async def answer_refused() -> None:
                async for message in receive:
                    await write.send(message)

            tg.start_soon(answer_refused)
            await lowlevel.run(read, write, lowlevel.create_initialization_options())
            tg.cancel_scope.cancel()
    finally:
        wrapper.detach()  # sys.stdin stays open for whoever runs after
