"""The agent: a ReAct loop over Ollama chat with tool calling, held by a state machine.

    start ──▶ acting ──conclude(accepted)──▶ CONCLUDED
                │  ├──insufficient_evidence──▶ INSUFFICIENT_EVIDENCE
                │  └──steps / wall clock spent──▶ BUDGET_EXHAUSTED
                └──no model / model down──▶ deterministic floor ──▶ CONCLUDED | INSUFFICIENT

The machine, not the model, decides: a conclusion is accepted only for a hypothesis that a
tool's own check supports; evidence the model asserts is rejected at the sink; malformed
calls, unknown tools and raw JSON in text are answered, never raised.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import httpx
import ollama
import pydantic

from stackgraph.rca.model import Alert, Plan

from ..windows import Windows
from .audit.run import audited
from .audit.stages import Claims
from .catalog import DEFAULT_SUGGESTED, default_tools, floor_args, suggestion_problem
from .evidence import (
    LLM_INFERRED,
    READS,
    WITH_BASELINE,
    EvidenceRejected,
    EvidenceSink,
    Hypothesis,
    HypothesisState,
    ToolEvidence,
    Verdict,
)
from .parse import ToolCall, calls_in_text, structured_calls
from .report import Report, build_report
from .toolbox import Tool, ToolContext, ToolResult, ToolStatus, call_tool
from .tools_graph import alert_query, similar_incidents

log = logging.getLogger(__name__)

PLAN_HEADER = (
    "## Likely root causes (graph blame-propagation, before tools) — "
    "prioritised leads to confirm, not conclusions"
)

SYSTEM_PROMPT = """You are StackGraph's root-cause analyst for a Kubernetes platform.
An alert fired. You get a ranked plan of suspects from the platform graph. Verify suspects
with the tools: every verdict is computed from the tool's result, not from what you say.
When a tool has supported a suspect, call conclude(service, summary). If the checks do not
support any suspect, call insufficient_evidence(reason). Never invent tool output."""

CONTROL_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "conclude",
            "description": "Name the root cause. Accepted only if a tool's evidence supports it.",
            "parameters": {
                "type": "object",
                "properties": {
                    "service": {"type": "string", "description": "The root-cause service."},
                    "summary": {"type": "string", "description": "One paragraph."},
                    "evidence": {"type": "array", "items": {"type": "string"}},
                    "path": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "How the fault spread: the root cause first, the "
                        "alerted service last.",
                    },
                    "confidence": {"type": "number", "description": "0 to 1."},
                },
                "required": ["service", "summary"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "insufficient_evidence",
            "description": "End without a root cause: the checks do not support any suspect.",
            "parameters": {
                "type": "object",
                "properties": {"reason": {"type": "string"}},
                "required": ["reason"],
            },
        },
    },
]


class Ending(StrEnum):
    CONCLUDED = "concluded"
    INSUFFICIENT_EVIDENCE = "insufficient_evidence"
    BUDGET_EXHAUSTED = "budget_exhausted"


@dataclass(frozen=True)
class AgentConfig:
    ollama_host: str | None = None
    model: str = "qwen3:8b"
    max_steps: int = 12
    wall_clock_s: float = 300.0
    top_k: int = 3
    chat_timeout_s: float = 120.0


@dataclass
class AgentRun:
    """Everything one investigation produced, model or not."""

    ending: Ending
    conclusion: str | None
    sink: EvidenceSink
    report: Report
    steps: int = 0
    llm_used: bool = False
    events: list[str] = field(default_factory=list)
    """What the machine did with each model turn (refusals, malformed calls...)."""
    claims: Claims = field(default_factory=Claims)
    """What the model stated beyond tool calls (the path, its confidence)."""
    audit: dict[str, Any] | None = None
    """The stage audit and its repairs (`audit.Outcome.as_dict`)."""

    @property
    def hypotheses(self) -> list[Hypothesis]:
        return self.sink.ranked()

    def as_dict(self) -> dict[str, Any]:
        return {
            "ending": str(self.ending),
            "conclusion": self.conclusion,
            "steps": self.steps,
            "llm_used": self.llm_used,
            "hypotheses": [h.as_dict() for h in self.hypotheses],
            "rejected_evidence": [{**e.as_dict(), "reason": why} for e, why in self.sink.rejected],
            "events": self.events,
            "report": self.report.as_dict(),
            "audit": self.audit,
        }


Clock = Callable[[], float]


def plan_prompt(alert: Alert, plan: Plan) -> str:
    """The user turn: the alert, then the plan verbatim under the leads header."""
    alert_doc = {"labels": dict(alert.labels), "annotations": dict(alert.annotations),
                 "starts_at": alert.starts_at, "fingerprint": alert.fingerprint}  # fmt: skip
    return (
        f"## Alert\n{json.dumps(alert_doc, indent=1, sort_keys=True)}\n\n{PLAN_HEADER}\n"
        f"{json.dumps(plan.to_dict(), indent=1, default=str)}\n"
    )


class Agent:
    """Run one investigation. Without `ollama_host`, only the deterministic floor runs."""

    def __init__(
        self,
        config: AgentConfig | None = None,
        tools: Mapping[str, Tool] | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self.config = config or AgentConfig()
        self.tools = dict(tools) if tools is not None else default_tools()
        self.clock = clock

    # -- evidence ---------------------------------------------------------------------

    def _seed(self, plan: Plan) -> EvidenceSink:
        sink = EvidenceSink()
        for i, cand in enumerate(plan.candidates):
            if cand.service not in sink.hypotheses:
                sink.hypotheses[cand.service] = Hypothesis(
                    cand.service, i + 1, float(cand.score), cand.kind, tuple(cand.suggested_tools)
                )
        return sink

    def run_check(
        self, tool: Tool, args: Any, ctx: ToolContext, sink: EvidenceSink
    ) -> tuple[ToolResult, ToolEvidence | None]:
        result = call_tool(tool, ctx, args if isinstance(args, Mapping) else {"_": args})
        suspect = str(args.get("service", "")) if isinstance(args, Mapping) else ""
        if not suspect or result.status == ToolStatus.INVALID_ARGUMENTS:
            return result, None
        try:
            verdict = tool.check(result, suspect, ctx.now(), ctx.window_s)
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
            **read_windows(tool.name, ctx),
        )
        sink.ensure(suspect)
        sink.add(ev)
        return result, ev

    # -- the deterministic floor ------------------------------------------------------

    def _floor(
        self, ctx: ToolContext, sink: EvidenceSink, deadline: float, events: list[str]
    ) -> int:
        calls = 0
        ranked = sink.ranked()[: self.config.top_k]
        for hyp in ranked:
            for spec in hyp.suggested_tools or DEFAULT_SUGGESTED:
                if self.clock() > deadline:
                    return calls
                name, _, arg = str(spec).partition(":")
                problem = suggestion_problem(self.tools, str(spec), hyp.suspect)
                if problem:
                    events.append(f"floor skipped {problem}")
                    continue
                tool = self.tools[name]
                if not tool.status(ctx).enabled:
                    continue
                for args in floor_args(name, arg, hyp.suspect):
                    self.run_check(tool, args, ctx, sink)
                    calls += 1
                if name == "git_log" and "git_show" in self.tools:
                    recent = _recent_commit(hyp)
                    if recent:
                        show = {"service": hyp.suspect, "sha": recent}
                        self.run_check(self.tools["git_show"], show, ctx, sink)
                        calls += 1
        if ranked and ctx.memory is not None and "memory_lookup" in self.tools:
            if self.clock() > deadline:
                return calls
            # Past incidents as tool evidence without a model: was the top suspect the
            # root cause of incidents like this one?
            ask = {"query": alert_query(ctx), "service": ranked[0].suspect}
            self.run_check(self.tools["memory_lookup"], ask, ctx, sink)
            calls += 1
        return calls

    @staticmethod
    def floor_conclusion(sink: EvidenceSink) -> str | None:
        best = next(iter(sink.ranked()), None)
        if best is not None and best.has_hard_evidence and best.state in (
            HypothesisState.SUPPORTED, HypothesisState.VALIDATED,
        ):  # fmt: skip
            return best.suspect
        return None

    # -- the loop ---------------------------------------------------------------------

    def investigate(self, alert: Alert, plan: Plan, ctx: ToolContext) -> AgentRun:
        """Verify the plan; the report also cites similar past incidents (memory search,
        no model) when the context has an incident memory."""
        run = audited(self, self._investigate(alert, plan, ctx), alert, plan, ctx)
        similar, note = similar_incidents(ctx)
        run.report.similar = similar
        if note:
            run.report.notes.append(note)
        return run

    def _investigate(self, alert: Alert, plan: Plan, ctx: ToolContext) -> AgentRun:
        start = self.clock()
        deadline = start + self.config.wall_clock_s
        sink = self._seed(plan)
        events: list[str] = []
        if not self.config.ollama_host:
            events.append("no OLLAMA_HOST: deterministic tool floor")
            return self._finish_floor(alert, plan, ctx, sink, deadline, events, 0, False)
        client = ollama.Client(host=self.config.ollama_host, timeout=self.config.chat_timeout_s)
        tool_specs = [t.ollama_spec() for t in self.tools.values() if t.status(ctx).enabled]
        tool_specs += CONTROL_TOOLS
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": plan_prompt(alert, plan)},
        ]
        narration: list[str] = []
        steps = 0
        while steps < self.config.max_steps:
            if self.clock() > deadline:
                events.append(f"wall-clock budget of {self.config.wall_clock_s:g} s spent")
                return self._end(alert, sink, Ending.BUDGET_EXHAUSTED, None, narration, events,
                                 steps)  # fmt: skip
            steps += 1
            try:
                resp = client.chat(model=self.config.model, messages=messages, tools=tool_specs,
                                   stream=False)  # fmt: skip
            except pydantic.ValidationError as exc:
                events.append(f"step {steps}: malformed model reply ({exc.error_count()} errors)")
                messages.append({"role": "user", "content": (
                    "Your last reply was malformed: tool call arguments must be a JSON object. "
                    "Try again.")})  # fmt: skip
                continue
            except (ollama.ResponseError, httpx.HTTPError, ConnectionError) as exc:
                events.append(f"step {steps}: model unavailable ({type(exc).__name__}: {exc}); "
                              "deterministic tool floor")  # fmt: skip
                return self._finish_floor(alert, plan, ctx, sink, deadline, events, steps,
                                          steps > 1, narration)  # fmt: skip
            content = str(resp.message.content or "")
            calls = structured_calls(resp.message.tool_calls)
            if not calls and content:
                calls = calls_in_text(content)
                if calls:
                    events.append(f"step {steps}: tool call parsed from raw JSON in text")
                else:
                    narration.append(content.strip())
            messages.append({"role": "assistant", "content": content})
            if not calls:
                events.append(f"step {steps}: no tool call")
                messages.append({"role": "user", "content": (
                    "Call a tool to check a suspect, conclude(service, summary) once a tool "
                    "supports it, or insufficient_evidence(reason).")})  # fmt: skip
                continue
            for call in calls:
                outcome = self._handle(call, ctx, sink, events, steps, narration)
                if isinstance(outcome, Ending):
                    conclusion = (str(call.arguments.get("service"))
                                  if outcome == Ending.CONCLUDED else None)  # fmt: skip
                    run = self._end(alert, sink, outcome, conclusion, narration, events, steps)
                    if conclusion is not None:
                        run.claims = claims_of(call.arguments)
                    return run
                messages.append({"role": "tool", "content": outcome, "tool_name": call.name})
        events.append(f"step budget of {self.config.max_steps} spent")
        return self._end(alert, sink, Ending.BUDGET_EXHAUSTED, None, narration, events, steps)

    def _handle(
        self,
        call: ToolCall,
        ctx: ToolContext,
        sink: EvidenceSink,
        events: list[str],
        step: int,
        narration: list[str],
    ) -> str | Ending:
        """Run one call; a string goes back to the model, an Ending stops the machine."""
        args = call.arguments
        if not isinstance(args, Mapping):
            events.append(f"step {step}: malformed arguments to {call.name}")
            return f"Arguments to {call.name} must be a JSON object."
        if call.name == "insufficient_evidence":
            narration.append(str(args.get("reason", "")))
            return Ending.INSUFFICIENT_EVIDENCE
        if call.name == "conclude":
            return self._conclude(args, sink, events, step, narration)
        tool = self.tools.get(call.name)
        if tool is None:
            events.append(f"step {step}: unknown tool {call.name!r}")
            known = ", ".join(sorted([*self.tools, "conclude", "insufficient_evidence"]))
            return f"There is no tool named {call.name!r}. Tools: {known}."
        result, ev = self.run_check(tool, args, ctx, sink)
        verdict = f" Verdict for {ev.hypothesis}: {ev.verdict}." if ev else ""
        return f"[{result.status}] {result.summary}{verdict}"

    def _conclude(
        self,
        args: Mapping[str, Any],
        sink: EvidenceSink,
        events: list[str],
        step: int,
        narration: list[str],
    ) -> str | Ending:
        service = str(args.get("service", ""))
        claimed = args.get("evidence") or []
        for text in claimed if isinstance(claimed, list) else [claimed]:
            invented = ToolEvidence("conclude", Verdict.SUPPORTS, str(text)[:500], LLM_INFERRED,
                                    check="asserted", hypothesis=service)  # fmt: skip
            try:
                sink.add(invented)
            except EvidenceRejected as exc:
                events.append(f"step {step}: rejected evidence asserted by the model: {exc}")
        hyp = sink.hypotheses.get(service)
        if hyp is None or not hyp.has_hard_evidence or hyp.state not in (
            HypothesisState.SUPPORTED, HypothesisState.VALIDATED,
        ):  # fmt: skip
            state = hyp.state if hyp else "unknown"
            events.append(f"step {step}: conclusion {service!r} refused (state {state})")
            return (f"Refused: no tool evidence supports {service!r} (state {state}). Run a "
                    "check on it, or conclude on a supported suspect.")  # fmt: skip
        narration.append(str(args.get("summary", "")))
        events.append(f"step {step}: conclusion {service!r} accepted ({hyp.state})")
        return Ending.CONCLUDED

    def _finish_floor(
        self,
        alert: Alert,
        plan: Plan,
        ctx: ToolContext,
        sink: EvidenceSink,
        deadline: float,
        events: list[str],
        steps: int,
        llm_used: bool,
        narration: Sequence[str] = (),
    ) -> AgentRun:
        calls = self._floor(ctx, sink, deadline, events)
        events.append(f"floor ran {calls} check(s)")
        conclusion = self.floor_conclusion(sink)
        ending = Ending.CONCLUDED if conclusion else Ending.INSUFFICIENT_EVIDENCE
        run = self._end(alert, sink, ending, conclusion, list(narration), events, steps)
        run.llm_used = llm_used
        return run

    def _end(
        self,
        alert: Alert,
        sink: EvidenceSink,
        ending: Ending,
        conclusion: str | None,
        narration: list[str],
        events: list[str],
        steps: int,
    ) -> AgentRun:
        report = build_report(alert, sink, str(ending), conclusion, "\n\n".join(narration))
        return AgentRun(ending, conclusion, sink, report, steps, steps > 0, events)


def _check_key(tool: str, args: Any) -> str:
    if not isinstance(args, Mapping):
        return tool
    parts = [f"{k}={args[k]}" for k in sorted(args) if k != "service"]
    return ",".join(parts) or "default"


def _recent_commit(h: Hypothesis) -> str | None:
    for ev in reversed(h.evidence):
        if ev.tool == "git_log" and ev.data.get("recent"):
            return str(ev.data["recent"][0]["sha"])
    return None


def read_windows(tool: str, ctx: ToolContext) -> dict[str, tuple[float, float] | None]:
    """The windows a tool's check reads (`READS`), for the evidence record."""
    reads = READS.get(tool)
    if reads is None:
        return {}
    win = Windows.ending_at(ctx.now(), ctx.window_s)
    return {"window": win.alert, "baseline": win.baseline if reads == WITH_BASELINE else None}


def claims_of(args: Mapping[str, Any]) -> Claims:
    """The path and confidence a model stated when it concluded (bounded, typed)."""
    return Claims(path=_names(args.get("path")), confidence=_number(args.get("confidence")))


def _names(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not value:
        return None
    return tuple(str(v)[:253] for v in value[:16])


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return max(0.0, min(1.0, float(value)))
