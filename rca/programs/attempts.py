"""Attempts on one incident: stage 1, then, while the leads are insufficient, stage 2 and
stage 3 (`stages`), all on one engine so each attempt reuses what the others read.

    records = escalate(engine, alert, first, insufficient=lambda step, run: ..., attempts=3)

`first` is the plan's own attempt (the configured program, or stage 1's pick: `Planner.
first`); `insufficient(step, run)` says whether an attempt's leads failed: in the replay,
feedback (the label); live, the agent's tools refuting them. Without a model, stage 3 is
skipped and a later attempt is stage 2 again, with every lead refuted so far excluded.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..model import Alert
from .engine import Engine, Run
from .model_stages import ModelClient, compose_with_model
from .program import Binding, Program, playbook
from .stages import TOP, Attempt, compose, excluding
from .synthesis import Check, CustomLibrary, synthesise

__all__ = ["AttemptRecord", "escalate", "with_operator"]


@dataclass(frozen=True)
class AttemptRecord:
    """One attempt: its stage and program, why, its leads, whether they sufficed, what the
    stage cost (seconds, graph rows and metric points it read: what earlier attempts had
    read came from the cache)."""

    stage: int
    program: str
    digest: str
    why: str
    top: tuple[str, ...]
    sufficient: bool
    cost: dict[str, float] = field(default_factory=dict)
    said: tuple[str, ...] = ()
    composed: dict[str, Any] | None = None
    """A program made for this incident (stages 2 and 3), as data; None for a playbook."""

    def as_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "program": self.program, "digest": self.digest,
                "why": self.why, "top": list(self.top), "sufficient": self.sufficient,
                "cost": self.cost, "said": list(self.said),
                **({"composed": self.composed} if self.composed else {})}  # fmt: skip


def with_operator(program: Program, op: str) -> Program:
    """`program` with one more scorer, a synthesised `op`, voting in its fusion."""
    answer = program.answer
    scored = Binding(op, op, (answer.args[0],))
    fused = Binding(answer.name, answer.op, (*answer.args, op), answer.params)
    return Program(f"{program.name}+{op}", (*program.bindings[:-1], scored, fused),
                   program.description, "composed")  # fmt: skip


def _next(engine: Engine, alert: Alert, i: int, refuted: set[str], tried: list[Program],
          model: ModelClient | None, custom: CustomLibrary | None,
          admission: tuple[Check, Check] | None, said: list[str]) -> Attempt | None:  # fmt: skip
    """The attempt after `i` insufficient ones: stage 3 third with a model (and the replay's
    admission), else stage 2 (the model's program, else the deterministic search)."""
    if i == 2 and model is not None and custom is not None and admission is not None:
        made = synthesise(model, engine.library, alert, refuted, *admission)
        said += [*made.said, f"synthesis: {made.admission.why}"]
        if made.op is not None and made.source is not None and made.admission.admitted:
            custom.admit(made.op, made.source, made.admission)
            engine.library = custom.library(engine.library)
            program = excluding(with_operator(playbook("default"), made.op.name), refuted)
            return Attempt(3, program, f"synthesised operator {made.op.name!r} admitted")
        return None
    if model is not None:
        step, notes = compose_with_model(model, engine.library, alert, refuted, tried)
        said += notes
        if step is not None:
            return step
    return compose(engine, refuted, tried)


def escalate(
    engine: Engine,
    alert: Alert,
    first: Attempt,
    insufficient: Callable[[Attempt, Run], bool],
    attempts: int = 3,
    model: ModelClient | None = None,
    custom: CustomLibrary | None = None,
    admission: tuple[Check, Check] | None = None,
) -> list[AttemptRecord]:
    """`first` (stage 1: the plan's program), then up to `attempts` in all, stopping at the
    first whose leads suffice. `insufficient(attempt, run)` judges each attempt's run: in
    the replay by the label, live by the agent's verdicts on its plan."""
    out: list[AttemptRecord] = []
    if custom is not None:
        engine.library = custom.library(engine.library)
    refuted: set[str] = set()
    tried: list[Program] = []
    step: Attempt | None = first
    t0, reads0 = time.perf_counter(), engine.reads()
    said: list[str] = []
    while step is not None and len(out) < attempts:
        run = engine.run(step.program)
        tried.append(step.program)
        if custom is not None:
            custom.used(b.op for b in step.program.bindings)
        top = tuple(c.service for c in run.answer.candidates[:TOP])
        failed = insufficient(step, run)
        rows, points = (b - a for a, b in zip(reads0, engine.reads(), strict=True))
        costs = {"seconds": round(time.perf_counter() - t0, 4), "graph_rows": rows,
                 "metric_points": points}  # fmt: skip
        composed = step.program.to_dict() if step.program.origin != "playbook" else None
        out.append(AttemptRecord(step.stage, step.program.name, step.program.digest, step.why,
                                 top, not failed, costs, tuple(said), composed))  # fmt: skip
        if not failed or len(out) >= attempts:
            break
        refuted.update(top)
        t0, reads0, said = time.perf_counter(), engine.reads(), []
        step = _next(engine, alert, len(out), refuted, tried, model, custom, admission, said)
    return out
