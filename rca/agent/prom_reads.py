"""Reading Prometheus' HTTP API for the agent's checks: an instant's worst value, a range's
worst value per step. The worst, since a service's pods are several series and the check
asks whether any of them shows the fault."""

from __future__ import annotations

import math

from .http_get import get_json
from .toolbox import ToolContext, ToolResult

__all__ = ["finite", "instant", "readings"]


def finite(value: str) -> float | None:
    number = float(value)
    return number if math.isfinite(number) else None


def instant(ctx: ToolContext, query: str, at: float) -> float | ToolResult | None:
    """The worst value of `query` at `at`, None when nothing was recorded."""
    data = get_json(str(ctx.prometheus_url), "/api/v1/query",
                    {"query": query, "time": f"{at:.3f}"}, "Prometheus")  # fmt: skip
    if isinstance(data, ToolResult):
        return data
    values = [finite(r["value"][1]) for r in data.get("result", []) if "value" in r]
    return max((v for v in values if v is not None), default=None)


def readings(
    ctx: ToolContext, query: str, span: tuple[float, float], step_s: float
) -> list[float] | ToolResult:
    """The worst value of `query` at each `step_s` over `span` (its first reading a step
    in, so each covers the span only)."""
    data = get_json(str(ctx.prometheus_url), "/api/v1/query_range", {
        "query": query, "start": f"{span[0] + step_s:.3f}", "end": f"{span[1]:.3f}",
        "step": f"{step_s:.3f}"}, "Prometheus")  # fmt: skip
    if isinstance(data, ToolResult):
        return data
    worst: dict[float, float] = {}
    for series in data.get("result", []):
        for t, value in series.get("values", []):
            number = finite(value)
            if number is not None:
                worst[float(t)] = max(worst.get(float(t), number), number)
    return [worst[t] for t in sorted(worst)]
