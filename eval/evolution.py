"""Evolution judged by replay: proposals mined from labelled trajectories, each tried on a
sandbox through both gates (`eval.gates`), promoted only when it passes.

    report = evolve(store, settings, since=T, dry_run=False)

The replay re-investigates each incident as it was: the plan with the candidate knowledge
(its program choice) on a copy of the graph as of the incident (`as_of`: time travel),
with the configured metrics, logs and spans, then the agent's deterministic floor with
the candidate knowledge (its tool order and anti-patterns). The diagnosis is the agent's
conclusion, else the plan's first lead; it is correct when it names the labelled root
cause. Cost is the tool calls the floor made (counted, so alike runs cost alike).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from stackgraph.config import Settings
from stackgraph.ingest import GraphIngestor
from stackgraph.memory.knowledge import (
    Knowledge,
    Trajectory,
    live,
    mine,
    promotion_records,
    trajectories,
)
from stackgraph.rca import Alert, Planner
from stackgraph.rca.agent import Agent, ToolContext
from stackgraph.rca.model import Plan
from stackgraph.rca.programs import playbook_names
from stackgraph.store import GraphReader, GraphStore

from .gates import Score, Verdict, judge, stratified_testbed

__all__ = ["Case", "IncidentReplay", "evolve", "sandbox"]

TESTBED = 40
"""Incidents in the outer gate's testbed (stratified), beside the proposal's own."""


@dataclass(frozen=True)
class Case:
    """What a replay needs of one labelled incident."""

    alert: Alert
    at: float | None
    root_cause: str


Context = Callable[[GraphReader, Alert, Plan, Knowledge], ToolContext]


@dataclass
class IncidentReplay:
    """`eval.gates.Replay` over labelled incidents, on one (sandbox) graph."""

    store: GraphReader
    planner: Planner
    cases: Mapping[str, Case]
    context: Context
    agent: Agent

    def __call__(self, knowledge: Knowledge, ids: Sequence[str]) -> dict[str, Score]:
        planner = replace(self.planner, knowledge=lambda _store: knowledge)
        out: dict[str, Score] = {}
        for fp in ids:
            case = self.cases.get(fp)
            if case is None:
                continue
            plan = planner(self.store, case.alert, at=case.at, as_of=case.at)
            ctx = self.context(self.store, case.alert, plan, knowledge)
            run = self.agent.investigate(case.alert, plan, ctx)
            first = plan.candidates[0].service if plan.candidates else None
            named = run.conclusion or first
            calls = sum(len(h.evidence) for h in run.hypotheses)
            out[fp] = Score(named == case.root_cause, float(calls))
        return out


def cases_of(trajectories: Sequence[Trajectory]) -> dict[str, Case]:
    """Labelled trajectories with a known root cause, as replay cases."""
    return {
        t.fingerprint: Case(Alert(dict(t.alert), starts_at=t.fired_at, fingerprint=t.fingerprint),
                            t.plan_at if t.plan_at is not None else t.opened_at, t.root_cause)
        for t in trajectories if t.label != "pending" and t.root_cause
    }  # fmt: skip


@contextmanager
def sandbox(store: GraphStore) -> Iterator[GraphStore]:
    """A copy of the graph for the gates' replays, dropped after: the live one is only
    read to copy it."""
    with GraphIngestor(store, who="evolve") as writer:
        copy = writer.copy_graph(f"{store.graph_name}_sandbox_{uuid.uuid4().hex[:8]}")
    try:
        yield copy
    finally:
        with GraphIngestor(copy, who="evolve") as writer:
            writer.drop_graph()


def tool_context(settings: Settings) -> Context:
    def make(store: GraphReader, alert: Alert, plan: Plan, knowledge: Knowledge) -> ToolContext:
        return ToolContext(store=store, alert=alert, plan=plan, at=alert.starts_at,
                           prometheus_url=settings.agent_prometheus_url or settings.prometheus_url,
                           knowledge=knowledge)  # fmt: skip

    return make


def evolve_with(
    current: Knowledge,
    labelled: Sequence[Trajectory],
    replay: Callable[[Knowledge, Sequence[str]], Mapping[str, Score]],
) -> tuple[Knowledge, list[Verdict]]:
    """Every proposal mined from `labelled`, judged in turn against the knowledge as it
    stands (a promotion is what the next proposal is judged against)."""
    verdicts: list[Verdict] = []
    for proposal in mine(labelled, current, playbook_names()):
        bed = stratified_testbed(labelled, proposal.sources, TESTBED)
        verdict = judge(proposal, current, replay, bed)
        verdicts.append(verdict)
        if verdict.promoted is not None:
            current = verdict.promoted
    return current, verdicts


def evolve(
    store: GraphStore, settings: Settings, *, since: float = 0.0, dry_run: bool = False
) -> dict[str, Any]:
    """Mine the trajectories since `since`, gate every proposal on a sandbox, promote what
    passes (unless `dry_run`); the report lists every verdict."""
    labelled = [t for t in trajectories(store, since) if t.label != "pending"]
    start = live(store)
    with sandbox(store) as copy:
        replay = IncidentReplay(copy, Planner.from_settings(settings), cases_of(labelled),
                                tool_context(settings), Agent())  # fmt: skip
        final, verdicts = evolve_with(start, labelled, replay)
    promoted = [v.promoted for v in verdicts if v.promoted is not None]
    if promoted and not dry_run:
        with GraphIngestor(store, who="evolve") as writer:
            for k in promoted:
                writer.write(promotion_records(k))
    return {
        "trajectories": len(labelled), "knowledge_before": start.version,
        "knowledge_after": final.version if promoted and not dry_run else start.version,
        "dry_run": dry_run, "proposals": len(verdicts),
        "admitted": len(promoted),
        "rejected_inner": sum(1 for v in verdicts if not v.inner.passed),
        "rejected_outer": sum(1 for v in verdicts if v.outer is not None and not v.outer.passed),
        "verdicts": [v.as_dict() for v in verdicts],
    }  # fmt: skip
