"""`Planner`: how every entry point investigates (API workers, `stackgraph investigate`,
MCP, the replay harness): the configured metrics source and depth, one code path.

    plan = Planner.from_settings(settings)(store, alert)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stackgraph.config import Settings
from stackgraph.store import GraphReader

from .investigate import Investigation
from .model import Alert, LogSource, MetricsSource, Plan, SpanSource
from .programs import (
    BUILTIN,
    DEFAULT_PROGRAM,
    Engine,
    Program,
    ProgramError,
    parse,
    playbook,
    playbook_names,
    verify,
)
from .programs.stages import Attempt, configured, select
from .sources import logs_from_settings, metrics_from_settings, spans_from_settings


@dataclass(frozen=True)
class Planner:
    """`investigate` with what the deployment configured, so no caller forgets a part."""

    metrics: MetricsSource | None = None
    hops: int = 4
    logs: LogSource | None = None
    spans: SpanSource | None = None
    program: Program = DEFAULT_PROGRAM
    select: bool = False
    """Stage 1 per alert: the playbook its features pick (`investigate_program: auto`)."""
    knowledge: Callable[[GraphReader], Any] | None = None
    """The live knowledge (`stackgraph.memory.knowledge`): a program it names for the
    alert's signature (a promoted K3 item) plans first."""

    @classmethod
    def from_settings(cls, settings: Settings) -> Planner:
        from stackgraph.memory.knowledge import LiveKnowledge  # memory builds on rca

        program = configured(settings.investigate_program)
        return cls(metrics_from_settings(settings), settings.investigate_hops,
                   logs_from_settings(settings), spans_from_settings(settings),
                   program or DEFAULT_PROGRAM, program is None, LiveKnowledge())  # fmt: skip

    def first(self, inv: Investigation, program: Program | None = None) -> tuple[Plan, Attempt]:
        """The first plan of an investigation and the attempt it is: `program`, else the
        configured one, else (with `select`) stage 1's pick; a failing pick falls back to
        the configured program (the plan says why)."""
        step = Attempt(1, program or self.program, "configured")
        used: list[str] = []
        learned = self._learned(inv) if program is None else None
        if learned is not None:
            step, used = learned
        elif program is None and self.select:
            try:
                engine = inv.engine()
                if isinstance(engine, Engine):
                    step = select(engine, inv.alert)
            except Exception as exc:  # the read path fails open; so does its choice
                step = Attempt(1, self.program, f"stage 1 failed: {type(exc).__name__}: {exc}")
        return inv.plan(step.program, why=step.why, knowledge=used), step

    def _learned(self, inv: Investigation) -> tuple[Attempt, list[str]] | None:
        """The program the live knowledge names for this alert's signature, if any."""
        if self.knowledge is None:
            return None
        from .agent.report import signature

        try:
            item = self.knowledge(inv.store).program_for(signature(inv.alert))
        except Exception:  # knowledge orders and hints; it never breaks a plan
            return None
        if item is None:
            return None
        name = str(item.data.get("program", ""))
        if item.data.get("bindings"):  # a composition the gates admitted
            try:
                program = verify(parse({"program": name, "bindings": item.data["bindings"]},
                                       origin="composed"), BUILTIN)  # fmt: skip
            except ProgramError:
                return None
        elif name in playbook_names():
            program = playbook(name)
        else:
            return None
        return Attempt(1, program, f"knowledge {item.id}"), [item.id]

    def investigation(
        self,
        store: GraphReader,
        alert: Alert,
        *,
        at: float | None = None,
        baseline: tuple[float, float] | None = None,
        limit: int = 10,
        as_of: float | None = None,
        hops: int | None = None,
    ) -> Investigation:
        """The alert's investigation with what the deployment configured: its programs
        share one engine (later attempts reuse what earlier ones read)."""
        return Investigation(store, alert, at, self.metrics, self.logs, self.spans,
                             hops or self.hops, limit, baseline, as_of)  # fmt: skip

    def __call__(
        self,
        store: GraphReader,
        alert: Alert,
        *,
        at: float | None = None,
        baseline: tuple[float, float] | None = None,
        limit: int = 10,
        as_of: float | None = None,
        hops: int | None = None,
        program: Program | None = None,
    ) -> Plan:
        inv = self.investigation(store, alert, at=at, baseline=baseline, limit=limit,
                                 as_of=as_of, hops=hops)  # fmt: skip
        return self.first(inv, program)[0]
