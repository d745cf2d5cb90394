"""Escalation in `serve`: when the agent's tools refute every lead of an incident's plan,
the next plan comes from a new program (`rca.programs` stage 2, on the same engine), and
the agent checks that one, up to `investigate_attempts` plans in all.

The final plan carries the attempts (`plan.program["attempts"]`: stage, program, why, its
leads, whether they sufficed), and the final run keeps the refuted hypotheses of the
earlier ones with their evidence, so the report and the write-back say what was ruled out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from stackgraph.rca import Planner
from stackgraph.rca.agent import Agent, AgentRun, HypothesisState, ToolContext
from stackgraph.rca.model import Alert, Plan
from stackgraph.rca.outcome import IncidentOutcome
from stackgraph.rca.programs import BUILTIN, DEFAULT_PROGRAM, Engine, Run, parse, verify
from stackgraph.rca.programs.attempts import escalate
from stackgraph.rca.programs.stages import TOP, Attempt
from stackgraph.store import GraphReader

__all__ = ["Escalation", "refuted_leads"]


def refuted_leads(run: AgentRun, plan: Plan) -> list[str] | None:
    """The plan's leads (its top 3) when the agent concluded nothing and refuted every one
    of them; None otherwise (the plan sufficed, or was not checked through)."""
    leads = [c.service for c in plan.candidates[:TOP]]
    if run.conclusion is not None or not leads:
        return None
    states = {h.suspect: h.state for h in run.hypotheses}
    if all(states.get(s) == HypothesisState.REFUTED for s in leads):
        return leads
    return None


@dataclass(frozen=True)
class Escalation:
    planner: Planner
    agent: Agent
    context_fn: Callable[[Alert, Plan], ToolContext]
    attempts: int = 2

    def __call__(self, store: GraphReader, outcome: IncidentOutcome) -> bool:
        """Escalate `outcome` in place when its first plan's leads were all refuted; True
        when a later plan was tried."""
        plan, run = outcome.plan, outcome.run
        if self.attempts < 2 or plan is None or run is None or refuted_leads(run, plan) is None:
            return False
        inv = self.planner.investigation(store, outcome.alert, at=plan.at,
                                         limit=max(10, len(plan.candidates)))  # fmt: skip
        engine = inv.engine()
        if not isinstance(engine, Engine):
            return False
        view = dict(plan.program)
        program = verify(parse(view), BUILTIN) if view.get("bindings") else DEFAULT_PROGRAM
        tried: list[tuple[Plan, AgentRun]] = []

        def insufficient(step: Attempt, result: Run) -> bool:
            if not tried:  # the first attempt is the plan the agent already checked
                tried.append((plan, run))
                return True
            nxt = inv.plan_of(result, step.why)
            checked = self.agent.investigate(
                outcome.alert, nxt, self.context_fn(outcome.alert, nxt)
            )
            tried.append((nxt, checked))
            return refuted_leads(checked, nxt) is not None and checked.conclusion is None

        first = Attempt(1, program, str(view.get("why") or "the plan's program"))
        records = escalate(engine, outcome.alert, first, insufficient, self.attempts)
        if len(tried) < 2:
            return False
        last_plan, last_run = tried[-1]
        for _, earlier in tried[:-1]:
            keep_ruled_out(earlier, last_run)
        attempts: list[dict[str, Any]] = [r.as_dict() for r in records]
        outcome.plan = replace(last_plan, program={**last_plan.program, "attempts": attempts})
        outcome.run = last_run
        return True


def keep_ruled_out(earlier: AgentRun, last: AgentRun) -> None:
    """The hypotheses an earlier attempt refuted, with their evidence, in the last run
    where it did not check them again."""
    for h in earlier.hypotheses:
        if h.state != HypothesisState.REFUTED:
            continue
        now = last.sink.hypotheses.get(h.suspect)
        if now is None or not now.evidence:
            last.sink.hypotheses[h.suspect] = h
