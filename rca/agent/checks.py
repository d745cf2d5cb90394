"""One tool call made into evidence: the tool's own check gives the verdict on the suspect
named in its arguments, and the sink records it."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ..windows import Windows
from .evidence import READS, WITH_BASELINE, ToolEvidence, Verdict, optional_number
from .sink import EvidenceSink
from .toolbox import Tool, ToolContext, ToolResult, ToolStatus, call_tool

log = logging.getLogger(__name__)


def run_check(
    tool: Tool, args: Any, ctx: ToolContext, sink: EvidenceSink
) -> tuple[ToolResult, ToolEvidence | None]:
    result = call_tool(tool, ctx, args if isinstance(args, Mapping) else {"_": args})
    suspect = str(args.get("service", "")) if isinstance(args, Mapping) else ""
    if not suspect or result.status == ToolStatus.INVALID_ARGUMENTS:
        return result, None
    judged: tuple[tuple[float, Verdict], ...] = ()
    try:
        verdict = tool.check(result, suspect, ctx.now(), ctx.window_s)
        if tool.judged_windows is not None:
            judged = tool.judged_windows(result, ctx.window_s)
    except Exception as exc:  # a broken check is inconclusive, never a crash
        log.warning("check of %s failed: %s", tool.name, exc)
        verdict = Verdict.INCONCLUSIVE
    ev = ToolEvidence(
        tool=tool.name,
        verdict=verdict,
        result_summary=result.summary[:1000],
        source=tool.source,
        check=_check_key(tool.name, args),
        hypothesis=suspect,
        status=str(result.status),
        data=dict(result.data) if tool.name.startswith("git_") else {},
        changed_at=optional_number(result.data.get("changed_at")),
        resolution_s=optional_number(result.data.get("resolution_s")),
        judged_windows=judged,
        **read_windows(tool.name, ctx, result),
    )
    sink.ensure(suspect)
    sink.add(ev)
    return result, ev


def read_windows(
    tool: str, ctx: ToolContext, result: ToolResult | None = None
) -> dict[str, tuple[float, float] | None]:
    """The windows a tool's check reads (`READS`), for the evidence record; a tool that
    compared with another baseline (the plan's, past a gap) says which in its result."""
    reads = READS.get(tool)
    if reads is None:
        return {}
    win = Windows.ending_at(ctx.now(), ctx.window_s)
    base = win.baseline if reads == WITH_BASELINE else None
    other = result.data.get("baseline_window") if result is not None else None
    if base is not None and isinstance(other, list) and len(other) == 2:
        base = (float(other[0]), float(other[1]))
    return {"window": win.alert, "baseline": base}


def _check_key(tool: str, args: Any) -> str:
    if not isinstance(args, Mapping):
        return tool
    parts = [f"{k}={args[k]}" for k in sorted(args) if k != "service"]
    return ",".join(parts) or "default"
