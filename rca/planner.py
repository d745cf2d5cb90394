"""`Planner`: how every entry point investigates (API workers, `stackgraph investigate`,
MCP, the replay harness): the configured metrics source and depth, one code path.

    plan = Planner.from_settings(settings)(store, alert)
"""

from __future__ import annotations

from dataclasses import dataclass

from stackgraph.config import Settings
from stackgraph.store import GraphReader

from .investigate import Investigation
from .model import Alert, LogSource, MetricsSource, Plan, SpanSource
from .programs import DEFAULT_PROGRAM, Program
from .sources import logs_from_settings, metrics_from_settings, spans_from_settings


@dataclass(frozen=True)
class Planner:
    """`investigate` with what the deployment configured, so no caller forgets a part."""

    metrics: MetricsSource | None = None
    hops: int = 4
    logs: LogSource | None = None
    spans: SpanSource | None = None
    program: Program = DEFAULT_PROGRAM

    @classmethod
    def from_settings(cls, settings: Settings) -> Planner:
        return cls(metrics_from_settings(settings), settings.investigate_hops,
                   logs_from_settings(settings), spans_from_settings(settings))  # fmt: skip

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
        return inv.plan(program or self.program)
