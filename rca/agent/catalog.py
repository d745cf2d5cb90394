"""The tool floor: every read-only tool the agent may call, declared once."""

from __future__ import annotations

from typing import Any

from .toolbox import PrerequisiteStatus, Tool, ToolContext, validate_args
from .tools_git import git_tools
from .tools_graph import graph_tool, memory_tool
from .tools_kube import kube_tools
from .tools_loki import loki_tool
from .tools_prometheus import prometheus_tool

DEFAULT_SUGGESTED = (
    "query_stack_graph",
    "prometheus_query:error_rate",
    "prometheus_query:latency_p95",
    "k8s_pod_status",
    "git_log",
)
"""What the deterministic floor runs for a candidate that names no tools of its own."""


def default_tools() -> dict[str, Tool]:
    tools = [graph_tool(), prometheus_tool(), loki_tool(), *kube_tools(), *git_tools(),
             memory_tool()]  # fmt: skip
    return {t.name: t for t in tools}


def floor_args(name: str, arg: str, suspect: str) -> list[dict[str, Any]]:
    """The calls the floor makes for one suggestion `"name"` or `"name:arg"` on a suspect:
    `prometheus_query` bare measures error_rate and latency_p95, `:signal` one signal;
    `loki_query:word` looks for the word (default `error`); tools that need more than a
    service (git_show, memory_lookup) are never run from a bare name."""
    if name == "prometheus_query":
        signals = [arg] if arg else ["error_rate", "latency_p95"]
        return [{"service": suspect, "signal": s} for s in signals]
    if name == "loki_query":
        return [{"service": suspect, "contains": arg or "error"}]
    if name in {"git_show", "memory_lookup"}:
        return []
    return [{"service": suspect}]


def suggestion_problem(tools: dict[str, Tool], spec: str, suspect: str = "svc") -> str | None:
    """Why the floor would not run `spec` (an unknown tool, an argument its schema refuses,
    an argument the tool takes none of), or None when it would."""
    name, _, arg = str(spec).partition(":")
    tool = tools.get(name)
    if tool is None:
        return f"suggested tool {spec!r}: no tool named {name!r}"
    calls = floor_args(name, arg, suspect)
    if arg and name not in {"prometheus_query", "loki_query"}:
        return f"suggested tool {spec!r}: {name} takes no ':{arg}'"
    for args in calls:
        _, problem = validate_args(tool, args)
        if problem:
            return f"suggested tool {spec!r}: {problem}"
    return None


def tool_status(tools: dict[str, Tool], ctx: ToolContext) -> list[PrerequisiteStatus]:
    """Enabled / disabled with the reason, for `/readyz` and the report."""
    return [t.status(ctx) for t in tools.values()]
