"""Tools as declared data: name, description, JSON-schema parameters, prerequisites, timeout.

A tool is a plain function from validated arguments to a `ToolResult`; it never raises to
the loop. Its *check* is a second deterministic function that reads the result against one
hypothesis and returns a verdict, so the model never asserts what a tool showed. Tools
never take a URL or host from the model: endpoints come from `ToolContext`, built from
settings.
"""

from __future__ import annotations

import concurrent.futures
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from stackgraph.inputs import NAME_PATTERN
from stackgraph.promql import PromQLNames
from stackgraph.rca.model import Alert, LogSource, Plan, SpanSource

from .calibration import OutcomeHistory
from .evidence import Verdict

WINDOW_S = 1800.0
"""The long window a check reads before the alert, against the equal span before it."""
WIDEN = 2.0
"""How many times the audit's widen-window patch widens it (`audit.repair`)."""
LOOKBACK_S = 2 * WIDEN * WINDOW_S
"""The furthest before the alert any check reads: the widened window and its baseline."""


class ToolStatus(StrEnum):
    """How a call ended. Anything but SUCCESS still yields evidence (inconclusive)."""

    SUCCESS = "success"
    NO_DATA = "no_data"
    ERROR = "error"
    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"
    INVALID_ARGUMENTS = "invalid_arguments"


@dataclass(frozen=True)
class ToolResult:
    status: ToolStatus
    summary: str
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Prerequisite:
    """A cheap check that decides whether a tool is offered at all, with the reason."""

    description: str
    check: Callable[[ToolContext], bool]


@dataclass(frozen=True)
class PrerequisiteStatus:
    tool: str
    enabled: bool
    reason: str


@dataclass
class ToolContext:
    """What tools may reach: the store, configured endpoints, mapped repos, the alert.

    Built by the service from settings; the model only ever supplies arguments.
    """

    store: Any = None
    alert: Alert | None = None
    plan: Plan | None = None
    at: float | None = None
    prometheus_url: str | None = None
    loki_url: str | None = None
    logs: LogSource | None = None
    """The read path's log source (`logs_from_settings`: log files, or Loki's lines);
    `loki_query` reads it when no `loki_url` is set."""
    spans: SpanSource | None = None
    """The read path's span source (`spans_from_settings`), or None: `loki_query`'s
    template tests read from it whose requests each line was written in."""
    repos: Mapping[str, Path] = field(default_factory=dict)
    """service name → local Git checkout (git_log / git_show)."""
    kube: Any = None
    """A kubernetes `ApiClient`, or None when no cluster is configured."""
    kube_namespace: str = "default"
    promql: PromQLNames = field(default_factory=PromQLNames)
    """The installation's metric names and pod pattern (`telemetry_metric_*`,
    `metrics_pod_pattern`): `prometheus_query` reads what the read path reads."""
    promql_templates: Mapping[str, str] = field(default_factory=dict)
    """The read path's kinds the installation replaced (`telemetry_extra_promql`)."""
    latency_unit_s: float = 1.0
    """Seconds per unit of the latency histograms (`telemetry_latency_unit_s`)."""
    rate_window_s: float = 60.0
    """The read path's rate window (`metrics_window`): the finest span it measures."""
    window_s: float = WINDOW_S
    memory: Any = None
    """The incident memory (`stackgraph.memory.Memory`) the service opened, or None."""
    knowledge: Any = None
    """The live layered knowledge (`stackgraph.memory.knowledge.Knowledge`), or None: the
    floor orders its checks by it and skips its anti-patterns; a model reads it."""
    history: OutcomeHistory | None = None
    """Earlier conclusions with feedback: the report states the conclusion's confidence as
    they calibrate it (`calibration`); None: the evidence's alone."""

    def now(self) -> float:
        if self.at is not None:
            return self.at
        if self.alert is not None and self.alert.starts_at is not None:
            return self.alert.starts_at
        return time.time()


def recent(t: float, now: float, window_s: float) -> bool:
    """Whether `t` falls in the window the change checks read: the `window_s` before the
    alert time `now`, the alert included."""
    return now - window_s <= t <= now


Runner = Callable[[ToolContext, Mapping[str, Any]], ToolResult]
Check = Callable[[ToolResult, str, float, float], Verdict]
"""(result, suspect service, alert time, window seconds) → verdict; deterministic."""
JudgedWindows = Callable[[ToolResult, float], tuple[tuple[float, Verdict], ...]]
"""A measurement's windows judged, each ending at the alert: (length, verdict there)."""


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: Mapping[str, Any]
    """JSON schema (object) of the arguments; `service` is the hypothesis under test."""
    run: Runner
    check: Check
    source: str
    """Provenance of what the tool reads (schema Source value)."""
    prerequisites: Sequence[Prerequisite] = ()
    timeout_s: float = 20.0
    judged_windows: JudgedWindows | None = None
    """A measurement's: each window's verdict (`ToolEvidence.judged_windows`)."""

    def status(self, ctx: ToolContext) -> PrerequisiteStatus:
        for pre in self.prerequisites:
            try:
                ok = pre.check(ctx)
            except Exception as exc:  # a prerequisite probe must not break the agent
                return PrerequisiteStatus(self.name, False, f"{pre.description}: {exc}")
            if not ok:
                return PrerequisiteStatus(self.name, False, f"needs {pre.description}")
        return PrerequisiteStatus(self.name, True, "ok")

    def ollama_spec(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters),
            },
        }


_SAFE_NAME = re.compile(NAME_PATTERN)


def validate_args(tool: Tool, args: Any) -> tuple[dict[str, Any] | None, str]:
    """Check arguments against the tool's schema (types, required, enums, names)."""
    if not isinstance(args, Mapping):
        return None, f"arguments to {tool.name} must be a JSON object, got {type(args).__name__}"
    props: Mapping[str, Any] = tool.parameters.get("properties", {})
    out: dict[str, Any] = {}
    for name in tool.parameters.get("required", []):
        if name not in args or args[name] in (None, ""):
            return None, f"{tool.name}: missing required argument {name!r}"
    for name, value in args.items():
        spec = props.get(name)
        if spec is None:
            return None, f"{tool.name}: unknown argument {name!r} (known: {sorted(props)})"
        kind = spec.get("type")
        if kind == "integer":
            if isinstance(value, str) and value.strip().lstrip("-").isdigit():
                value = int(value)
            if not isinstance(value, int) or isinstance(value, bool):
                return None, f"{tool.name}: argument {name!r} must be an integer"
            value = max(spec.get("minimum", value), min(spec.get("maximum", value), value))
        elif kind == "number":
            if isinstance(value, bool) or not isinstance(value, int | float):
                return None, f"{tool.name}: argument {name!r} must be a number"
        elif kind == "boolean":
            if not isinstance(value, bool):
                return None, f"{tool.name}: argument {name!r} must be true or false"
        elif kind == "string":
            if not isinstance(value, str):
                return None, f"{tool.name}: argument {name!r} must be a string"
            if "enum" in spec and value not in spec["enum"]:
                return None, f"{tool.name}: argument {name!r} must be one of {spec['enum']}"
            if spec.get("format") == "name" and not _SAFE_NAME.match(value):
                return None, f"{tool.name}: argument {name!r} is not a valid name: {value!r}"
            if len(value) > int(spec.get("maxLength", 1000)):
                return None, f"{tool.name}: argument {name!r} is longer than {spec['maxLength']}"
            if "pattern" in spec and not re.search(spec["pattern"], value):
                return (
                    None,
                    f"{tool.name}: argument {name!r} must match {spec['pattern']}: {value!r}",
                )
        out[name] = value
    return out, ""


_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="sg-tool")


def call_tool(tool: Tool, ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    """Run one tool under its timeout; every failure comes back as a result."""
    status = tool.status(ctx)
    if not status.enabled:
        return ToolResult(ToolStatus.UNAVAILABLE, f"{tool.name} is not available: {status.reason}")
    clean, problem = validate_args(tool, args)
    if clean is None:
        return ToolResult(ToolStatus.INVALID_ARGUMENTS, problem)
    future = _POOL.submit(tool.run, ctx, clean)
    try:
        return future.result(timeout=tool.timeout_s)
    except concurrent.futures.TimeoutError:
        return ToolResult(ToolStatus.TIMEOUT, f"{tool.name} did not answer in {tool.timeout_s:g} s")
    except Exception as exc:  # a failed tool is a result, never an exception to the loop
        return ToolResult(ToolStatus.ERROR, f"{tool.name} failed: {type(exc).__name__}: {exc}")


def service_param(
    description: str = "The suspect service (the hypothesis under test).",
) -> dict[str, Any]:
    return {"type": "string", "description": description, "format": "name"}
