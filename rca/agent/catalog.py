"""The tool floor: every read-only tool the agent may call, declared once."""

from __future__ import annotations

from .toolbox import PrerequisiteStatus, Tool, ToolContext
from .tools_git import git_tools
from .tools_graph import graph_tool, memory_tool
from .tools_kube import kube_tools
from .tools_telemetry import loki_tool, prometheus_tool

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


def tool_status(tools: dict[str, Tool], ctx: ToolContext) -> list[PrerequisiteStatus]:
    """Enabled / disabled with the reason, for `/readyz` and the report."""
    return [t.status(ctx) for t in tools.values()]
