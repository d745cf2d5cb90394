"""One GET of a JSON API (Prometheus, Loki) with every failure turned into a `ToolResult`.

The base URL comes from `ToolContext` (settings); the path is a constant of the calling
tool, so the model never chooses where a request goes.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import httpx

from .toolbox import ToolResult, ToolStatus

HTTP_TIMEOUT_S = 10.0
"""Below every telemetry tool's own timeout, so a hung server frees the worker too."""


@cache
def _client() -> httpx.Client:
    """One pooled client for every tool's GETs (it can be shared between threads): a client
    per request builds a TLS context each time, which was most of a check's cost, and
    opens a connection each time."""
    return httpx.Client()


def get_json(
    base: str, path: str, params: Mapping[str, str], what: str, timeout_s: float = HTTP_TIMEOUT_S
) -> dict[str, Any] | ToolResult:
    """The decoded `data` of a `{"status": "success", "data": ...}` answer, or a result
    saying why not (unreachable, timed out, HTTP error with the server's message)."""
    url = f"{base.rstrip('/')}{path}"
    try:
        resp = _client().get(url, params=dict(params), timeout=timeout_s)
    except httpx.TimeoutException:
        return ToolResult(ToolStatus.TIMEOUT, f"{what} did not answer in {timeout_s:g} s")
    except httpx.HTTPError as exc:
        return ToolResult(ToolStatus.UNAVAILABLE, f"{what} is unreachable: {type(exc).__name__}")
    try:
        body: Any = resp.json()
    except ValueError:
        body = None
    if resp.status_code != 200 or not isinstance(body, dict) or body.get("status") != "success":
        detail = body.get("error") if isinstance(body, dict) else resp.text.strip()
        return ToolResult(
            ToolStatus.ERROR,
            f"{what} answered HTTP {resp.status_code}: {str(detail or '')[:300]}".rstrip(": "),
            {"http_status": resp.status_code},
        )
    data = body.get("data")
    return data if isinstance(data, dict) else {}
