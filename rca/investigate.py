"""`investigate(store, alert)` → a ranked, explained `Plan`. Fail-open by contract.

alert labels → anchor Service → a verified program (`rca.programs`; the `default`
playbook unless told otherwise): generators (k-hop neighbourhood, callers, deploys and
changes, incident history, metric probes, logs, spans) → scorers that vote or abstain →
reciprocal rank fusion, ties by topology → ranked candidates. The plan carries the program
that produced it, what its `auto` parameters were estimated as, and what each binding cost.

An `Investigation` keeps one engine for one alert, so a second program (a later attempt,
`rca.programs.stages`) reuses what the first one read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from stackgraph.store import GraphReader, GraphStore

from .anchor import resolve_anchor
from .facts import NodeFact, Request
from .model import Alert, LogSource, MetricsSource, Plan, SpanSource
from .neighbourhood import clamp_hops
from .pipeline import abstentions
from .programs import BUILTIN, DEFAULT_PROGRAM, Context, Engine, Operator, Program, Run
from .windows import BASELINE_SPAN_S, windows_for


def program_view(run: Run, why: str = "", knowledge: Sequence[str] = ()) -> dict[str, Any]:
    """The program as the plan shows it: its bindings, digest, the values chosen for its
    `auto` parameters, the fusion's roles and what each binding read (rows from the graph,
    points from the metrics source; its seconds are the `Run`'s, so that a plan stays a
    function of its inputs)."""
    return {
        **run.program.to_dict(),
        "digest": run.program.digest,
        **({"why": why} if why else {}),
        **({"knowledge": list(knowledge)} if knowledge else {}),
        "chosen": {k: dict(v) for k, v in run.chosen.items()},
        "fusion": {"sources": dict(run.answer.sources), "priors": list(run.answer.priors)},
        "reads": [{k: v for k, v in asdict(c).items() if k != "seconds"} for c in run.costs],
    }


@dataclass
class Investigation:
    """One alert, investigated by one or more programs that share an engine."""

    store: GraphStore | GraphReader
    alert: Alert
    at: float | None = None
    metrics: MetricsSource | None = None
    logs: LogSource | None = None
    spans: SpanSource | None = None
    hops: int = 2
    limit: int = 10
    baseline: tuple[float, float] | None = None
    as_of: float | None = None
    library: dict[str, Operator] = field(default_factory=lambda: dict(BUILTIN))
    _engine: Engine | None = field(default=None, init=False, repr=False)
    _anchor: tuple[NodeFact | None, str] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.hops = clamp_hops(self.hops)
        self.limit = max(1, min(int(self.limit), 200))
        self.windows = windows_for(self.alert, self.at, baseline=self.baseline)

    def _empty(self, anchor: str | None, reason: str, program: Program) -> Plan:
        return Plan(anchor=anchor, candidates=[], reason=reason, at=self.windows.alert[1],
                    playbook=program.name, hops=self.hops, window=self.windows.alert,
                    baseline=self.windows.baseline)  # fmt: skip

    def engine(self) -> Engine | str:
        """The engine on this alert's context, or why there is none (no anchor)."""
        if self._engine is not None:
            return self._engine
        if self._anchor is None:
            self._anchor = resolve_anchor(self.store, self.alert, at=self.as_of)
        anchor, why = self._anchor
        if anchor is None:
            return why
        request = Request(self.alert, self.windows, self.hops, self.limit, self.metrics,
                          self.logs, self.spans,
                          as_of=None if self.as_of is None else float(self.as_of))  # fmt: skip
        ctx = Context(self.store, self.alert, anchor, request, self.at, self.baseline)
        self._engine = Engine(ctx, self.library)
        return self._engine

    def run(self, program: Program = DEFAULT_PROGRAM) -> Run | str:
        """The program's run, or why nothing could run (no anchor). Raises what the
        program's operators raise: `plan` is the fail-open boundary."""
        engine = self.engine()
        return engine if isinstance(engine, str) else engine.run(program)

    def plan(
        self, program: Program = DEFAULT_PROGRAM, why: str = "", knowledge: Sequence[str] = ()
    ) -> Plan:
        """Fail-open: a store/driver failure or a program that does not verify becomes
        the plan's reason, never an exception. `why`: why this program (the plan says)."""
        try:
            run = self.run(program)
        except Exception as exc:  # the fail-open boundary
            anchor = self._anchor[0].name if self._anchor and self._anchor[0] else None
            return self._empty(anchor, f"investigation failed open: {type(exc).__name__}: {exc}",
                               program)  # fmt: skip
        if isinstance(run, str):
            return self._empty(None, run, program)
        return self.plan_of(run, why, knowledge)

    def plan_of(self, run: Run, why: str = "", knowledge: Sequence[str] = ()) -> Plan:
        """The plan a program's run gives (what `plan` returns)."""
        facts, answer = run.aggregate, run.answer
        win = facts.windows or self.windows
        notes = [*run.notes, *abstentions(answer.signals)]
        if self.baseline is not None and win.baseline != tuple(float(b) for b in self.baseline):
            notes.append(
                "the baseline asked for does not end before the alert window's end; "
                f"the {BASELINE_SPAN_S / 60:.0f} minutes before the alert window were used"
            )
        reason = ""
        if len(facts.nodes) <= 1:
            reason = f"{facts.anchor} has no known dependencies in the graph; only itself is ranked"
        edge_status = [e.status for e in facts.edges]
        if edge_status and all(s == "Stale" for s in edge_status):
            notes.append("every dependency edge around the anchor is Stale; telemetry counts half")
        coverage = {  # an abstaining scorer reached none: the ablation fuses as the plan did
            n: sorted(s.covered or ())
            for n, s in answer.signals.items()
            if s.abstained or s.covered is not None
        }
        return Plan(anchor=facts.anchor, candidates=list(answer.candidates)[: self.limit],
                    reason=reason, at=win.alert[1], playbook=run.program.name,
                    hops=self.hops, window=win.alert, baseline=win.baseline,
                    notes=tuple(notes), coverage=coverage,
                    program=program_view(run, why, knowledge))  # fmt: skip


def investigate(
    store: GraphStore | GraphReader,
    alert: Alert,
    *,
    at: float | None = None,
    metrics: MetricsSource | None = None,
    logs: LogSource | None = None,
    spans: SpanSource | None = None,
    hops: int = 2,
    limit: int = 10,
    program: Program = DEFAULT_PROGRAM,
    baseline: tuple[float, float] | None = None,
    as_of: float | None = None,
) -> Plan:
    """Rank the likely root causes of `alert` with `program` (the default playbook).

    Fail-open: an empty, stale or unreachable graph, an unknown service or a failing
    metrics probe gives an empty or partial plan whose `reason`/`notes` say why; this
    function does not raise for them. `baseline` overrides the baseline window (e.g. the
    same hour yesterday); by default it is the 20 minutes before the alert window.
    `as_of` answers on the graph as it was then (time travel: facts first seen later are
    left out, Stale/Active as they were then); `at` only places the windows, so a replay
    over a graph written today still sees it. Entry points call this through `Planner`,
    which brings the configured metrics, log and span sources and depth.
    """
    return Investigation(store, alert, at, metrics, logs, spans, hops, limit, baseline,
                         as_of).plan(program)  # fmt: skip


__all__ = ["Investigation", "investigate", "program_view"]
