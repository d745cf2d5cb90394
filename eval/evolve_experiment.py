"""`stackgraph eval evolve`: learning from feedback, measured in time order.

The labelled incidents of a dataset are fed oldest first, each replayed through the product
path (`Replayer`: Prometheus, the lanes, a data-timed alert, `Planner`), then diagnosed
twice **before its own feedback**: with the knowledge evolved so far, and with the shipped
knowledge (evolution off, the same stream). Its feedback (the label) then makes it a
labelled trajectory, and every `every` incidents `evolve_with` mines the trajectories so
far and puts each proposal through the dual gate, replaying the earlier incidents from
their kept graphs and caches. Nothing an incident is scored with has seen its own label.

Diagnosis: the agent's deterministic floor on the plan (its conclusion), else the plan's
first lead. Its world and tools are those of the end-to-end replay (`e2e.world.build_world`):
the dataset's Prometheus, the read path's logs, and a Git monorepo of the case's releases
before the alert (one commit per release at its time, read by the change lane and mapped
to every service for the agent's Git checks).
Reported per arm: AC@1 of the diagnosis, AC@1 of the plan, Validated precision, tool calls
and seconds per incident; per gate, the proposals rejected, with examples.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stackgraph.config import Settings
from stackgraph.ingest import GraphIngestor
from stackgraph.memory.knowledge import Knowledge, Trajectory, shipped, trajectory_of
from stackgraph.rca import Investigation
from stackgraph.rca.agent import Agent, AgentRun, HypothesisState
from stackgraph.rca.outcome import IncidentOutcome
from stackgraph.store import GraphStore

from .datasets.model import Case
from .e2e.world import build_world
from .evolution import Diagnoser, evolve_with, tool_context
from .gates import Score, Verdict
from .harness import dataset_prometheus, load, manifests_beside
from .openmetrics import place
from .replay import Replayer

__all__ = ["EVERY", "experiment"]

EVERY = 10
"""Evolve after every ten incidents: often enough to learn within a day's faults, seldom
enough that a gate has a few incidents of a signature to judge on."""

Progress = Callable[[int, int, str], None]


@dataclass
class _Seen:
    inv: Investigation
    truth: str


def _validated(run: AgentRun) -> bool:
    return run.conclusion_state == HypothesisState.VALIDATED


def _arm(rows: list[dict[str, Any]], arm: str) -> dict[str, float]:
    n = max(1, len(rows))
    got = [r[arm] for r in rows]
    validated = [g for g in got if g["validated"]]
    return {
        "ac1": round(sum(g["correct"] for g in got) / n, 4),
        "plan_ac1": round(sum(g["plan_first"] for g in got) / n, 4),
        "validated": len(validated),
        "validated_precision": round(sum(g["correct"] for g in validated) / len(validated), 4)
        if validated else None,
        "tool_calls_per_incident": round(sum(g["calls"] for g in got) / n, 3),
        "seconds_per_incident": round(sum(g["seconds"] for g in got) / n, 4),
    }  # fmt: skip


def experiment(
    name: str,
    path: Path | None,
    store: GraphStore,
    *,
    settings: Settings,
    adapter: str | None = None,
    every: int = EVERY,
    limit: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The time-ordered experiment on one dataset (module docstring)."""
    cases = place(load(name, path, adapter))[:limit]
    spent: dict[str, float] = {}
    rows: list[dict[str, Any]] = []
    verdicts: list[tuple[int, Verdict]] = []
    labelled: list[Trajectory] = []
    seen: dict[str, _Seen] = {}
    knowledge = shipped()
    agent = Agent()
    repos: dict[str, dict[str, Path]] = {}
    with (
        dataset_prometheus(cases, settings, spent) as (sources, _),
        tempfile.TemporaryDirectory(prefix="sg-evolve-") as tmp,
    ):
        live = settings.model_copy(update=sources)
        replayer = Replayer(store, live, manifests_beside(path), keep_graphs=True, attempts=0)
        built: list[Path] = []

        def world(graph: GraphStore, case: Case, at: float, _: Path) -> list[str]:
            repo, notes = build_world(replayer, graph, case, at, Path(tmp) / f"{len(built)}")
            built.append(repo)
            return notes

        replayer.world = world
        context = tool_context(live, replayer.planner.logs,
                               lambda alert: repos.get(str(alert.fingerprint), {}),
                               replayer.planner.spans)  # fmt: skip
        diagnose = Diagnoser(replayer.planner, context, agent)

        def replay(k: Knowledge, ids: Any) -> dict[str, Score]:
            return {fp: diagnose(seen[fp].inv, k, seen[fp].truth).score for fp in ids
                    if fp in seen}  # fmt: skip

        try:
            for i, case in enumerate(cases):
                if progress is not None:
                    progress(i, len(cases), case.case_id)
                done = replayer.run(case, i)
                inv = done.investigation
                if not isinstance(inv, Investigation) or not done.plan.candidates:
                    continue
                repos[str(inv.alert.fingerprint)] = dict.fromkeys(case.services, built[-1])
                row: dict[str, Any] = {"case_id": case.case_id, "root_cause": case.root_cause}
                for arm, k in (("off", shipped()), ("on", knowledge)):
                    d = diagnose(inv, k, case.root_cause)
                    plan, run = d.plan, d.run
                    first = plan.candidates[0].service if plan.candidates else None
                    row[arm] = {"correct": d.score.correct, "calls": d.score.cost,
                                "seconds": d.seconds, "plan_first": first == case.root_cause,
                                "validated": _validated(run), "program": plan.playbook}  # fmt: skip
                    if arm == "on":
                        outcome = IncidentOutcome(str(inv.alert.fingerprint), inv.alert,
                                                  case.symptom_service, done.alert.fired_at,
                                                  plan, run, feedback="confirmed",
                                                  confirmed_root_cause=case.root_cause)  # fmt: skip
                        labelled.append(trajectory_of(outcome))
                rows.append(row)
                seen[str(inv.alert.fingerprint)] = _Seen(inv, case.root_cause)
                if (i + 1) % max(1, every) == 0:
                    knowledge, found = evolve_with(knowledge, labelled, replay)
                    verdicts += [(i + 1, v) for v in found]
        finally:
            replayer.close()
            for i in range(len(cases)):
                key = f"{store.graph_name}-eval-{replayer.run_id}-{i}"
                with GraphIngestor(GraphStore(store.conn, key, store.where), who="eval") as w:
                    w.drop_graph()
    return _report(name, rows, verdicts, knowledge, every)


def _rejections(verdicts: list[Verdict]) -> list[dict[str, Any]]:
    """Per kind of proposal and the gate's reason (its counts left out, so alike reasons
    count together), how many were rejected, and the first of them: a few examples that
    differ, rather than the first few, which are often one proposal judged again."""
    groups: dict[tuple[str, str], tuple[Verdict, int]] = {}
    for v in verdicts:
        why = v.rejected_by.why if v.rejected_by is not None else ""
        key = (v.proposal.item.kind, re.sub(r"(?<![\d.])\d+(?![\d.])", "N", why))
        first, n = groups.get(key, (v, 0))
        groups[key] = (first, n + 1)
    return [
        {"kind": kind, "reason": reason, "count": n, "example": _example(v)}
        for (kind, reason), (v, n) in sorted(groups.items(), key=lambda kv: -kv[1][1])
    ]


def _example(v: Verdict) -> dict[str, Any]:
    """A rejected proposal, with what the rejecting gate measured before and after it: how
    near it came is what a reader weighing a rule against the gate needs."""
    gate = v.rejected_by
    out: dict[str, Any] = {"proposal": f"{v.proposal.op} {v.proposal.item.id}",
                           "what": v.proposal.item.text}  # fmt: skip
    if gate is not None:
        out |= {"why": gate.why, "cases": gate.cases, "before": dict(gate.before),
                "after": dict(gate.after)}  # fmt: skip
    return out


def _report(name: str, rows: list[dict[str, Any]], verdicts: list[tuple[int, Verdict]],
            final: Knowledge, every: int) -> dict[str, Any]:  # fmt: skip
    inner = [v for _, v in verdicts if v.rejected_by is v.inner]
    outer = [v for _, v in verdicts if v.rejected_by is not None and v.rejected_by is v.outer]
    admitted = [(at, v) for at, v in verdicts if v.promoted is not None]
    return {
        "dataset": name, "incidents": len(rows), "every": every,
        "off": _arm(rows, "off"), "on": _arm(rows, "on"),
        "proposals": len(verdicts), "admitted": len(admitted),
        "rejected_inner": len(inner), "rejected_outer": len(outer),
        "admitted_items": [{"after_incident": at, "proposal": f"{v.proposal.op} "
                            f"{v.proposal.item.id}", "data": dict(v.proposal.item.data)}
                           for at, v in admitted],
        "rejected": {"inner": _rejections(inner), "outer": _rejections(outer)},
        "knowledge_version": final.version,
        "cases": rows,
    }  # fmt: skip
