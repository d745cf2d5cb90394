"""The audit wired to an agent run: build the stages, score, route, repair, and say so."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from stackgraph import cypher
from stackgraph.errors import StackGraphError
from stackgraph.rca.model import Alert, Plan
from stackgraph.timetravel import neighbours_at

from ..alike import Calls
from ..checks import run_check
from ..floor import floor_conclusion
from ..report import build_report, signature, symptom_of
from ..sink import EvidenceSink
from ..toolbox import Tool, ToolContext
from .checks import Neighbours
from .critic import Critic
from .repair import Outcome, RepairHint, Work, repair

if TYPE_CHECKING:
    from ..run import AgentRun


def graph_neighbours(store: Any) -> Neighbours:
    """A service's neighbours as the graph held them at the time asked (time travel); a
    node with no name (a release, an endpoint) is no hop of a path between services."""
    seen: dict[tuple[str, float | None], set[str]] = {}

    def names(name: str, at: float | None) -> set[str]:
        if (name, at) not in seen:
            seen[(name, at)] = {n for _, _, n in neighbours_at(store, name, at) if n}
        return seen[(name, at)]

    return names


def remembered(store: Any, alert: Alert) -> list[RepairHint]:
    """Repairs that paid before on this alert signature, best first (empty on any error:
    memory orders the patches, it never decides)."""
    if store is None:
        return []
    try:
        rows = store.read(cypher.load("audit_repairs"), {"signature": signature(alert)})
    except StackGraphError:
        return []
    return [RepairHint(str(r["stage"]), str(r["patch"]), float(r["gain"] or 0.0)) for r in rows]


def audited(
    tools: Mapping[str, Tool], run: AgentRun, alert: Alert, plan: Plan, ctx: ToolContext,
    calls: Calls, critic: Critic | None = None,
) -> AgentRun:  # fmt: skip
    """`run` audited and, where the route says, repaired with `tools`; `run.audit` holds
    the record. `calls`: the services each one calls, as the investigation read them."""
    from ..run import Ending  # the run imports the audit's stages

    symptom = plan.anchor or symptom_of(alert)[0]
    paths = {c.service: c.paths for c in plan.candidates}
    # The path is walked in the graph the plan was ranked on, not at the alert's start: the
    # graph learns of an edge only when a lane next runs, often after the alert fired.
    work = Work(run.sink, run.conclusion, run.claims, symptom, paths, ctx, plan.at,
                plan.window, calls=calls)  # fmt: skip

    def check(name: str, args: dict[str, Any], c: ToolContext, sink: EvidenceSink) -> bool:
        tool = tools.get(name)
        if tool is None or not tool.status(c).enabled:
            return False
        run_check(tool, args, c, sink)
        return True

    def next_suspects(w: Work) -> list[str]:
        done = {h.suspect for h in w.sink.hypotheses.values() if h.evidence} | set(w.checked)
        return [c.service for c in plan.candidates if c.service not in done]

    neighbours = graph_neighbours(ctx.store) if ctx.store is not None else None
    conclude = partial(floor_conclusion, calls=calls)
    out = repair(work, neighbours, check, conclude, next_suspects,
                 remembered(ctx.store, alert), critic)  # fmt: skip
    w = out.work
    ending = run.ending
    if w.conclusion != run.conclusion:
        ending = Ending.CONCLUDED if w.conclusion else Ending.INSUFFICIENT_EVIDENCE
    report = run.report
    if out.repairs:
        fresh = build_report(alert, w.sink, str(ending), w.conclusion, report.narration,
                             ctx.history, calls)  # fmt: skip
        fresh.similar, fresh.notes = (
            report.similar,
            [*report.notes, *fresh.notes[len(report.notes) :]],
        )
        report = fresh
    report.notes.append(note(out))
    return replace(run, sink=w.sink, conclusion=w.conclusion, ending=ending, report=report,
                   claims=w.claims, audit=out.as_dict())  # fmt: skip


def note(out: Outcome) -> str:
    """The report's line on the audit: the score, the route, and what was repaired."""
    first = f"audit S={out.first.score:.2f} ({out.first.route})"
    if not out.repairs:
        weak = [f"{k}: {'; '.join(v.problems)}" for k, v in out.first.stages.items() if v.problems]
        return first + (f"; {' | '.join(weak)}" if weak else "")
    done = ", ".join(f"{r.stage} by {r.patch} ({r.before:.2f} -> {r.after:.2f})"
                     for r in out.repairs)  # fmt: skip
    return f"{first}; repaired {done}; now S={out.final.score:.2f}"
