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
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import ollama
import pydantic

from stackgraph.rca.model import Alert, Plan

from .alike import Calls, graph_calls
from .audit.critic import model_critic
from .audit.run import audited
from .audit.stages import Claims
from .catalog import default_tools
from .checks import run_check
from .evidence import LLM_INFERRED, Hypothesis, ToolEvidence, Verdict
from .floor import KNOWLEDGE_EVENT, floor_conclusion, knowledge_plan, run_floor
from .parse import ToolCall, calls_in_text, structured_calls
from .prompts import CONTROL_TOOLS, MALFORMED_REPLY, NO_TOOL_CALL, SYSTEM_PROMPT, plan_prompt
from .report import build_report, signature
from .run import AgentRun, Ending
from .sink import EvidenceRejected, EvidenceSink
from .toolbox import Tool, ToolContext
from .tools_graph import similar_incidents


@dataclass(frozen=True)
class AgentConfig:
    ollama_host: str | None = None
    model: str = "qwen3:8b"
    max_steps: int = 12
    wall_clock_s: float = 300.0
    top_k: int = 3
    chat_timeout_s: float = 120.0


Clock = Callable[[], float]


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

    def _seed(self, plan: Plan) -> EvidenceSink:
        sink = EvidenceSink()
        for i, cand in enumerate(plan.candidates):
            if cand.service not in sink.hypotheses:
                sink.hypotheses[cand.service] = Hypothesis(
                    cand.service, i + 1, float(cand.score), cand.kind, tuple(cand.suggested_tools)
                )
        return sink

    def investigate(self, alert: Alert, plan: Plan, ctx: ToolContext) -> AgentRun:
        """Verify the plan; the report also cites similar past incidents (memory search,
        no model) when the context has an incident memory."""
        cfg = self.config
        critic = (model_critic(cfg.ollama_host, cfg.model, cfg.chat_timeout_s)
                  if cfg.ollama_host else None)  # fmt: skip
        graph = graph_calls(ctx)  # one read of each service's callees per investigation
        run = audited(self.tools, self._investigate(alert, plan, ctx, graph), alert, plan, ctx,
                      graph, critic)  # fmt: skip
        similar, note = similar_incidents(ctx)
        run.report.similar = similar
        if note:
            run.report.notes.append(note)
        return run

    def _investigate(self, alert: Alert, plan: Plan, ctx: ToolContext, graph: Calls) -> AgentRun:
        start = self.clock()
        deadline = start + self.config.wall_clock_s
        sink = self._seed(plan)
        events: list[str] = []
        if not self.config.ollama_host:
            events.append("no OLLAMA_HOST: deterministic tool floor")
            return self._finish_floor(alert, plan, ctx, graph, sink, deadline, events, 0, False)
        client = ollama.Client(host=self.config.ollama_host, timeout=self.config.chat_timeout_s)
        tool_specs = [t.ollama_spec() for t in self.tools.values() if t.status(ctx).enabled]
        tool_specs += CONTROL_TOOLS
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": plan_prompt(alert, plan)},
        ]
        if ctx.knowledge is not None:  # K0, K1 always; K2, K3 as this alert's signature asks
            shown = ctx.knowledge.disclose(signature(alert))
            messages.append(
                {
                    "role": "user",
                    "content": "What this platform has learned "
                    f"(K0 guidance, K1 profile, K2 skeletons, K3 rules): {json.dumps(shown)}",
                }
            )
            events += [f"{KNOWLEDGE_EVENT}{i}" for i in knowledge_plan(ctx)[2]]
        narration: list[str] = []
        steps = 0
        while steps < self.config.max_steps:
            if self.clock() > deadline:
                events.append(f"wall-clock budget of {self.config.wall_clock_s:g} s spent")
                return self._end(alert, ctx, graph, sink, Ending.BUDGET_EXHAUSTED, None, narration,
                                 events, steps)  # fmt: skip
            steps += 1
            try:
                resp = client.chat(model=self.config.model, messages=messages, tools=tool_specs,
                                   stream=False)  # fmt: skip
            except pydantic.ValidationError as exc:
                events.append(f"step {steps}: malformed model reply ({exc.error_count()} errors)")
                messages.append({"role": "user", "content": MALFORMED_REPLY})
                continue
            except (ollama.ResponseError, httpx.HTTPError, ConnectionError) as exc:
                events.append(f"step {steps}: model unavailable ({type(exc).__name__}: {exc}); "
                              "deterministic tool floor")  # fmt: skip
                return self._finish_floor(alert, plan, ctx, graph, sink, deadline, events, steps,
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
                messages.append({"role": "user", "content": NO_TOOL_CALL})
                continue
            for call in calls:
                outcome = self._handle(call, ctx, sink, events, steps, narration)
                if isinstance(outcome, Ending):
                    conclusion = (str(call.arguments.get("service"))
                                  if outcome == Ending.CONCLUDED else None)  # fmt: skip
                    run = self._end(alert, ctx, graph, sink, outcome, conclusion, narration,
                                    events, steps)  # fmt: skip
                    if conclusion is not None:
                        run.claims = Claims.stated(call.arguments)
                    return run
                messages.append({"role": "tool", "content": outcome, "tool_name": call.name})
        events.append(f"step budget of {self.config.max_steps} spent")
        return self._end(alert, ctx, graph, sink, Ending.BUDGET_EXHAUSTED, None, narration, events,
                         steps)  # fmt: skip

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
        result, ev = run_check(tool, args, ctx, sink)
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
        why = f"{service!r} is no suspect" if hyp is None else sink.unconcludable(hyp)
        if hyp is None or why is not None:
            state = hyp.state if hyp else "unknown"
            events.append(f"step {step}: conclusion {service!r} refused (state {state})")
            return (f"Refused: {why}. Run a check on it (metrics, logs, "
                    "Kubernetes, Git), or conclude on a verified suspect.")  # fmt: skip
        narration.append(str(args.get("summary", "")))
        events.append(f"step {step}: conclusion {service!r} accepted ({hyp.state})")
        return Ending.CONCLUDED

    def _finish_floor(
        self,
        alert: Alert,
        plan: Plan,
        ctx: ToolContext,
        graph: Calls,
        sink: EvidenceSink,
        deadline: float,
        events: list[str],
        steps: int,
        llm_used: bool,
        narration: Sequence[str] = (),
    ) -> AgentRun:
        calls = run_floor(self.tools, ctx, sink, deadline, events, self.config.top_k, self.clock)
        events.append(f"floor ran {calls} check(s)")
        conclusion = floor_conclusion(sink, graph)
        ending = Ending.CONCLUDED if conclusion else Ending.INSUFFICIENT_EVIDENCE
        run = self._end(alert, ctx, graph, sink, ending, conclusion, list(narration), events, steps)
        run.llm_used = llm_used
        return run

    def _end(
        self,
        alert: Alert,
        ctx: ToolContext,
        graph: Calls,
        sink: EvidenceSink,
        ending: Ending,
        conclusion: str | None,
        narration: list[str],
        events: list[str],
        steps: int,
    ) -> AgentRun:
        report = build_report(alert, sink, str(ending), conclusion, "\n\n".join(narration),
                              ctx.history, graph)  # fmt: skip
        return AgentRun(ending, conclusion, sink, report, steps, steps > 0, events)
