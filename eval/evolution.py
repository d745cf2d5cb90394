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

import json
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stackgraph.config import Settings
from stackgraph.ingest import GraphIngestor
from stackgraph.memory.knowledge import (
    Item,
    Knowledge,
    Proposal,
    Trajectory,
    live,
    mine,
    promotion_records,
    trajectories,
)
from stackgraph.memory.knowledge.evolution import MODEL_PROMPT, from_model
from stackgraph.memory.knowledge.profile import profile_items
from stackgraph.rca import Alert, Investigation, Planner
from stackgraph.rca.agent import Agent, AgentRun, ToolContext
from stackgraph.rca.agent.report import signature
from stackgraph.rca.agent.tools_prometheus import context_fields
from stackgraph.rca.model import Plan
from stackgraph.rca.programs import BUILTIN, DEFAULT_PROGRAM, fusion_roles, playbook_names
from stackgraph.rca.programs.model_stages import ModelClient, Refused
from stackgraph.rca.programs.stages import compositions
from stackgraph.store import GraphReader, GraphStore

from .gates import Score, Verdict, judge, stratified_testbed

__all__ = [
    "Case",
    "Diagnoser",
    "Diagnosis",
    "IncidentReplay",
    "evolve",
    "evolve_with",
    "sandbox",
    "tool_context",
]

TESTBED = 40
"""Incidents in the outer gate's testbed (stratified), beside the proposal's own."""


@dataclass(frozen=True)
class Case:
    """What a replay needs of one labelled incident."""

    alert: Alert
    at: float | None
    root_cause: str


Context = Callable[[GraphReader, Alert, Plan, Knowledge], ToolContext]


@dataclass(frozen=True)
class Diagnosis:
    plan: Plan
    run: AgentRun
    score: Score
    seconds: float


class Diagnoser:
    """Re-investigates an incident with a knowledge version: the plan (its program choice)
    from the incident's engine, then the agent's run (its tool order and anti-patterns),
    scored against the label. The agent's run is memoised on what it depends on: the
    plan's windows and candidates (rank, prior, checks) and the knowledge the floor reads,
    so a proposal that leaves a plan as it was costs no second run."""

    def __init__(self, planner: Planner, context: Context, agent: Agent) -> None:
        self.planner, self.context, self.agent = planner, context, agent
        self._runs: dict[tuple[Any, ...], tuple[AgentRun, float]] = {}

    def __call__(self, inv: Investigation, knowledge: Knowledge, truth: str) -> Diagnosis:
        t0 = time.perf_counter()
        plan = replace(self.planner, knowledge=lambda _store: knowledge).first(inv)[0]
        order, avoid, _ = knowledge.tool_plan(signature(inv.alert))
        key = (inv.alert.fingerprint, plan.window, plan.baseline, tuple(order),
               tuple(sorted(avoid)), tuple((c.service, c.score, tuple(c.suggested_tools))
                                           for c in plan.candidates))  # fmt: skip
        if key not in self._runs:
            ctx = self.context(inv.store, inv.alert, plan, knowledge)
            self._runs[key] = (self.agent.investigate(inv.alert, plan, ctx),
                               time.perf_counter() - t0)  # fmt: skip
        run, seconds = self._runs[key]
        first = plan.candidates[0].service if plan.candidates else None
        calls = sum(len(h.evidence) for h in run.hypotheses)
        return Diagnosis(plan, run, Score((run.conclusion or first) == truth, float(calls)),
                         seconds)  # fmt: skip


@dataclass
class IncidentReplay:
    """`eval.gates.Replay` over labelled incidents, on one (sandbox) graph: each one planned
    as of its time, once; later knowledge versions re-rank from its engine's cache."""

    store: GraphReader
    planner: Planner
    cases: Mapping[str, Case]
    diagnose: Diagnoser
    _invs: dict[str, Investigation] = field(default_factory=dict)

    def __call__(self, knowledge: Knowledge, ids: Sequence[str]) -> dict[str, Score]:
        out: dict[str, Score] = {}
        for fp in ids:
            case = self.cases.get(fp)
            if case is None:
                continue
            if fp not in self._invs:
                self._invs[fp] = self.planner.investigation(self.store, case.alert, at=case.at,
                                                            as_of=case.at)  # fmt: skip
            out[fp] = self.diagnose(self._invs[fp], knowledge, case.root_cause).score
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


def tool_context(
    settings: Settings, logs: Any = None,
    repos: Callable[[Alert], Mapping[str, Path]] | None = None, spans: Any = None,
) -> Context:  # fmt: skip
    """The agent's tools as `serve` gives them (its Prometheus, the read path's logs and
    spans, and `repos`: the Git repositories mapped per service for an alert, as
    `agent_repos`)."""

    prometheus = context_fields(settings)

    def make(store: GraphReader, alert: Alert, plan: Plan, knowledge: Knowledge) -> ToolContext:
        return ToolContext(store=store, alert=alert, plan=plan, at=plan.at or alert.starts_at,
                           prometheus_url=settings.agent_prometheus_url or settings.prometheus_url,
                           logs=logs, spans=spans, knowledge=knowledge,
                           repos=dict(repos(alert)) if repos is not None else {},
                           **prometheus)  # fmt: skip

    return make


def model_proposals(client: ModelClient, labelled: Sequence[Trajectory],
                    k: Knowledge) -> tuple[list[Proposal], list[str]]:  # fmt: skip
    """Proposals from the model (with OLLAMA_HOST): the same gates judge them."""
    books = playbook_names()
    doc = {"programs": books, "knowledge": k.to_dict(),
           "trajectories": [t.to_dict() for t in labelled[-200:]]}  # fmt: skip
    messages = [{"role": "system", "content": MODEL_PROMPT},
                {"role": "user", "content": json.dumps(doc, default=str)}]  # fmt: skip

    def accept(text: str) -> list[Proposal]:
        try:
            return from_model(json.loads(text), labelled, books)
        except ValueError as exc:
            raise Refused([str(exc)]) from exc

    found, _, said = client.until_accepted(messages, accept, "proposals")
    return found or [], said


def default_compositions() -> dict[str, list[dict[str, Any]]]:
    """Stage 2's fusions of the default program's scorers, as program choices to propose
    (the default itself left out)."""
    sources, _ = fusion_roles(DEFAULT_PROGRAM, BUILTIN)
    made = compositions(DEFAULT_PROGRAM, BUILTIN, list(sources), ())
    return {p.name: [b.to_dict() for b in p.bindings] for p in made if p.name != "every-source"}


def evolve_with(
    current: Knowledge,
    labelled: Sequence[Trajectory],
    replay: Callable[[Knowledge, Sequence[str]], Mapping[str, Score]],
    extra: Sequence[Proposal] = (),
) -> tuple[Knowledge, list[Verdict]]:
    """Every proposal mined from `labelled` (and `extra`, the model's), judged in turn
    against the knowledge as it stands (a promotion is what the next one is judged by)."""
    verdicts: list[Verdict] = []
    for proposal in [*mine(labelled, current, playbook_names(), default_compositions()),
                     *extra]:  # fmt: skip
        bed = stratified_testbed(labelled, proposal.sources, TESTBED)
        verdict = judge(proposal, current, replay, bed)
        verdicts.append(verdict)
        if verdict.promoted is not None:
            current = verdict.promoted
    return current, verdicts


def _with_profile(k: Knowledge, profile: Sequence[Item]) -> Knowledge:
    """`k` with its K1 items replaced by `profile` when they differ (a new version, noted as
    derived: the profile is read off the world-model, not learned, so it is not gated)."""
    old = [i for i in k.items if i.tier == "K1"]
    if [i.to_dict() for i in old] == [i.to_dict() for i in profile] or not profile:
        return k
    rest = [i for i in k.items if i.tier != "K1"]
    nxt = k.with_items([*rest, *profile], "K1 refreshed from the world-model")
    return Knowledge(nxt.version, nxt.items, nxt.parent, nxt.note, {"derived": "world-model"})


def evolve(
    store: GraphStore, settings: Settings, *, since: float = 0.0, dry_run: bool = False
) -> dict[str, Any]:
    """Mine the trajectories since `since`, gate every proposal on a sandbox, promote what
    passes (unless `dry_run`); the report lists every verdict."""
    labelled = [t for t in trajectories(store, since) if t.label != "pending"]
    start = live(store)
    refreshed = _with_profile(start, profile_items(store))
    said: list[str] = []
    extra: list[Proposal] = []
    if settings.ollama_host:
        extra, said = model_proposals(ModelClient(settings.ollama_host, settings.agent_model),
                                      labelled, refreshed)  # fmt: skip
    with sandbox(store) as copy:
        planner = Planner.from_settings(settings)
        replay = IncidentReplay(copy, planner, cases_of(labelled),
                                Diagnoser(planner, tool_context(settings, planner.logs,
                                                                spans=planner.spans),
                                          Agent()))  # fmt: skip
        final, verdicts = evolve_with(refreshed, labelled, replay, extra)
    promoted = [v.promoted for v in verdicts if v.promoted is not None]
    if refreshed is not start:
        promoted.insert(0, refreshed)
    if promoted and not dry_run:
        with GraphIngestor(store, who="evolve") as writer:
            for k in promoted:
                writer.write(promotion_records(k))
    return {
        "trajectories": len(labelled), "knowledge_before": start.version,
        "knowledge_after": final.version if promoted and not dry_run else start.version,
        "profile_refreshed": refreshed is not start, "model": said or None,
        "dry_run": dry_run, "proposals": len(verdicts),
        "admitted": sum(1 for v in verdicts if v.promoted is not None),
        "rejected_inner": sum(1 for v in verdicts if v.rejected_by is v.inner),
        "rejected_outer": sum(1 for v in verdicts
                              if v.rejected_by is not None and v.rejected_by is v.outer),
        "verdicts": [v.as_dict() for v in verdicts],
    }  # fmt: skip
