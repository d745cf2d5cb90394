"""Telemetry tools: `prometheus_query` and `loki_query`, each a GET on the configured server.

The model picks a *signal* and a service; the query text is a constant template here with
the (validated) service name bound into a string literal, so model text never becomes
PromQL or LogQL syntax.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import httpx

from .evidence import Verdict
from .toolbox import Prerequisite, Tool, ToolContext, ToolResult, ToolStatus, service_param

PROMQL: dict[str, str] = {
    "error_rate": (
        'sum(rate(traces_service_graph_request_failed_total{server="<<s>>"}[5m]))'
        ' / sum(rate(traces_service_graph_request_total{server="<<s>>"}[5m]))'
    ),
    "latency_p95": (
        "histogram_quantile(0.95, sum by (le) ("
        'rate(traces_service_graph_request_server_seconds_bucket{server="<<s>>"}[5m])))'
    ),
    "restarts": 'sum(increase(kube_pod_container_status_restarts_total{pod=~"<<re>>-.+"}[30m]))',
}
"""signal → PromQL; `<<s>>` is the service name, `<<re>>` its regex-escaped form."""

THRESHOLDS: dict[str, tuple[float, float]] = {
    "error_rate": (0.05, 0.01),
    "latency_p95": (1.0, 0.3),
    "restarts": (1.0, 0.0),
}
"""signal → (supports at or above, refutes at or below)."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$")


def _literal(service: str) -> str:
    if not _NAME.match(service):
        raise ValueError(f"{service!r} is not a service name")
    return service


def promql(signal: str, service: str) -> str:
    name = _literal(service)
    return PROMQL[signal].replace("<<s>>", name).replace("<<re>>", name.replace(".", "\\\\."))


def _run_prometheus(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    signal, service = str(args["signal"]), str(args["service"])
    query = promql(signal, service)
    resp = httpx.get(
        f"{str(ctx.prometheus_url).rstrip('/')}/api/v1/query",
        params={"query": query, "time": f"{ctx.now():.3f}"},
        timeout=10.0,
    )
    if resp.status_code != 200:
        return ToolResult(ToolStatus.ERROR, f"Prometheus answered HTTP {resp.status_code}")
    body = resp.json()
    values = [
        float(r["value"][1]) for r in body.get("data", {}).get("result", [])
        if r.get("value") and r["value"][1] not in ("NaN", "+Inf", "-Inf")
    ]  # fmt: skip
    if not values:
        return ToolResult(ToolStatus.NO_DATA, f"no {signal} series for {service}", {"query": query})
    value = max(values)
    shown = {
        "error_rate": f"{100 * value:.3g}%",
        "latency_p95": f"{1000 * value:.0f} ms",
        "restarts": f"{value:.0f}",
    }[signal]
    return ToolResult(
        ToolStatus.SUCCESS,
        f"{service} {signal.replace('_', ' ')} = {shown} at the alert time (Prometheus)",
        {"signal": signal, "value": value, "query": query},
    )


def _check_prometheus(result: ToolResult, suspect: str, now: float, window_s: float) -> Verdict:
    if result.status != ToolStatus.SUCCESS:
        return Verdict.INCONCLUSIVE
    high, low = THRESHOLDS[str(result.data["signal"])]
    value = float(result.data["value"])
    if value >= high:
        return Verdict.SUPPORTS
    if value <= low:
        return Verdict.REFUTES
    return Verdict.INCONCLUSIVE


def prometheus_tool() -> Tool:
    return Tool(
        name="prometheus_query",
        description=(
            "Measure one signal of a service in Prometheus at the alert time: error_rate "
            "(failed/total calls into it), latency_p95 (seconds), restarts (pod restarts, 30m)."
        ),
        parameters={
            "type": "object",
            "properties": {
                "service": service_param(),
                "signal": {"type": "string", "enum": sorted(PROMQL)},
            },
            "required": ["service", "signal"],
        },
        run=_run_prometheus,
        check=_check_prometheus,
        source="Prometheus",
        prerequisites=(Prerequisite("a Prometheus URL", lambda c: bool(c.prometheus_url)),),
        timeout_s=15.0,
    )


LOG_LINES_BAD = 5


def _logql_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _run_loki(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    service = _literal(str(args["service"]))
    needle = str(args.get("contains") or "error")[:64]
    window = int(ctx.window_s)
    query = (
        f'sum(count_over_time({{service_name="{service}"}} |= "{_logql_string(needle)}"'
        f" [{window}s]))"
    )
    resp = httpx.get(
        f"{str(ctx.loki_url).rstrip('/')}/loki/api/v1/query",
        params={"query": query, "time": str(int(ctx.now() * 1e9))},
        timeout=10.0,
    )
    if resp.status_code != 200:
        return ToolResult(ToolStatus.ERROR, f"Loki answered HTTP {resp.status_code}")
    result = resp.json().get("data", {}).get("result", [])
    count = sum(float(r["value"][1]) for r in result if r.get("value"))
    return ToolResult(
        ToolStatus.SUCCESS,
        f"{int(count)} log lines of {service} contain {needle!r} in the last {window // 60} min",
        {"count": count, "contains": needle},
    )


def _check_loki(result: ToolResult, suspect: str, now: float, window_s: float) -> Verdict:
    if result.status == ToolStatus.SUCCESS and float(result.data["count"]) >= LOG_LINES_BAD:
        return Verdict.SUPPORTS
    return Verdict.INCONCLUSIVE


def loki_tool() -> Tool:
    return Tool(
        name="loki_query",
        description="Count a service's log lines containing a word (default 'error') in Loki.",
        parameters={
            "type": "object",
            "properties": {
                "service": service_param(),
                "contains": {"type": "string", "description": "Text to look for (<= 64 chars)."},
            },
            "required": ["service"],
        },
        run=_run_loki,
        check=_check_loki,
        source="Loki",
        prerequisites=(Prerequisite("a Loki URL", lambda c: bool(c.loki_url)),),
        timeout_s=15.0,
    )
