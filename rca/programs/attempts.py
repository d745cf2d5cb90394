"""Attempts on one incident: stage 1, then, while the leads are insufficient, stage 2 and
stage 3 (`stages`), all on one engine so each attempt reuses what the others read.

    records = escalate(engine, alert, insufficient=lambda top: ..., attempts=3)

`insufficient(top)` says whether an attempt's leads (its top 3) failed: in the replay,
feedback (the label); live, the agent's tools refuting them. Without a model, stage 3 is
skipped and a later attempt is stage 2 again, with every lead refuted so far excluded.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..model import Alert
from .engine import Engine
from .model_stages import ModelClient, compose_with_model
from .program import Binding, Program, playbook
from .stages import TOP, Attempt, compose, excluding, select
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


def escalate(
    engine: Engine,
    alert: Alert,
    insufficient: Callable[[Sequence[str]], bool],
    attempts: int = 3,
    model: ModelClient | None = None,
    custom: CustomLibrary | None = None,
    admission: tuple[Check, Check] | None = None,
) -> list[AttemptRecord]:
    """Up to `attempts` attempts, stopping at the first whose leads suffice."""
    out: list[AttemptRecord] = []
    if custom is not None:
        engine.library = custom.library(engine.library)
    refuted: set[str] = set()
    tried: list[Program] = []
    for i in range(attempts):
        said: list[str] = []
        t0, reads0 = time.perf_counter(), engine.reads()
        step: Attempt | None
        if i == 0:
            step = select(engine, alert)
        elif i == 2 and model is not None and custom is not None and admission is not None:
            made = synthesise(model, engine.library, alert, refuted, *admission)
            said += [*made.said, f"synthesis: {made.admission.why}"]
            step = None
            if made.op is not None and made.source is not None and made.admission.admitted:
                custom.admit(made.op, made.source, made.admission)
                engine.library = custom.library(engine.library)
                program = excluding(with_operator(playbook("default"), made.op.name), refuted)
                step = Attempt(3, program, f"synthesised operator {made.op.name!r} admitted")
        else:
            step = None
            if model is not None:
                step, notes = compose_with_model(model, engine.library, alert, refuted, tried)
                said += notes
            if step is None:
                step = compose(engine, refuted, tried)
        if step is None:
            break
        run = engine.run(step.program)
        tried.append(step.program)
        if custom is not None:
            custom.used(b.op for b in step.program.bindings)
        top = tuple(c.service for c in run.answer.candidates[:TOP])
        failed = insufficient(top)
        rows, points = (b - a for a, b in zip(reads0, engine.reads(), strict=True))
        costs = {"seconds": round(time.perf_counter() - t0, 4), "graph_rows": rows,
                 "metric_points": points}  # fmt: skip
        composed = step.program.to_dict() if step.program.origin != "playbook" else None
        out.append(AttemptRecord(step.stage, step.program.name, step.program.digest, step.why,
                                 top, not failed, costs, tuple(said), composed))  # fmt: skip
        if not failed:
            break
        refuted.update(top)
    return out
