"""What the generators gather and the scorers read: plain frozen records, no store handle.

A `Facts` value grows through the playbook's generators (`dataclasses.replace`), then is
handed, finished, to pure scoring functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .model import Alert, LogLine, LogSource, MetricsSource, SpanSource
from .windows import Windows

if TYPE_CHECKING:
    from stackgraph.ingest.lanes.telemetry import EdgeStat, Span


@dataclass(frozen=True)
class NodeFact:
    """A node of the neighbourhood with its provenance and its degree in the whole graph."""

    name: str
    label: str = "Service"
    criticality: str | None = None
    fan_in: int = 0
    fan_out: int = 0
    depth: int = 0
    position: str = "downstream"
    source: str | None = None
    status: str | None = None
    last_seen: float | None = None


@dataclass(frozen=True)
class EdgeFact:
    """A dependency edge caller → callee; telemetry is absent when never measured."""

    src: str
    dst: str
    type: str = "CALLS"
    trace_count: float | None = None
    error_rate: float | None = None
    latency_p95_ms: float | None = None
    source: str | None = None
    status: str | None = None
    last_seen: float | None = None

    @property
    def stale(self) -> bool:
        return self.status == "Stale"


@dataclass(frozen=True)
class ChangeFact:
    """A Deploy or Change touching a candidate, with when it happened."""

    service: str
    kind: str
    at: float
    ref: str
    source: str | None = None
    status: str | None = None


@dataclass(frozen=True)
class HistoryFact:
    """Past incidents root-caused by a candidate (validated ROOT_CAUSED_BY edges)."""

    service: str
    incidents: int
    on_anchor: int
    confidence: float | None = None
    last_seen: float | None = None


@dataclass(frozen=True)
class ProbeSeries:
    """One probed metric series of a candidate: baseline and alert-window values, and when
    each alert-window value was taken (epoch s; empty: evenly spaced over the window)."""

    kind: str
    name: str
    baseline: tuple[float, ...]
    alert: tuple[float, ...]
    alert_times: tuple[float, ...] = ()
    span_s: float = 0.0
    """The finest span one reading covers (a rate's window; 0: unknown)."""

    @property
    def ref(self) -> str:
        """`kind/name`: how evidence, and knowledge that mutes a series, refer to it (after
        the candidate's name)."""
        return f"{self.kind}/{self.name}"


WIDEST = 50
"""The most candidates one generator adds (the anchor's callers, its namespace-mates): five
times the API's default plan of 10. Fixed, not the request's `limit`: which candidates a
plan weighs must not depend on how many of them it is asked to show, so a replay that asks
for every rank weighs what a user's plan of ten weighs (one path)."""


@dataclass(frozen=True)
class Request:
    """What an investigation was asked: read by generators (with the store), never scored.
    `limit` is how many candidates the plan shows; no generator reads it."""

    alert: Alert
    windows: Windows
    hops: int
    limit: int
    metrics: MetricsSource | None = None
    logs: LogSource | None = None
    spans: SpanSource | None = None
    path_limit: int = 2000
    as_of: float | None = None
    """Answer on the graph as it was then (epoch seconds; None: now). Binds `$at`."""


@dataclass(frozen=True)
class Facts:
    anchor: str
    nodes: Mapping[str, NodeFact] = field(default_factory=dict)
    edges: Sequence[EdgeFact] = ()
    paths: Mapping[str, Sequence[tuple[str, ...]]] = field(default_factory=dict)
    changes: Sequence[ChangeFact] = ()
    history: Mapping[str, HistoryFact] = field(default_factory=dict)
    probes: Mapping[str, Sequence[ProbeSeries]] = field(default_factory=dict)
    probe_source: str = "metrics"
    logs: Mapping[str, tuple[tuple[LogLine, ...], tuple[LogLine, ...]]] = field(
        default_factory=dict
    )
    """Per candidate: its log lines in the baseline window and in the alert window."""
    traces: tuple[Sequence[Span], Sequence[Span]] = ((), ())
    """Every service's spans that ended in the baseline window, and in the alert window."""
    windows: Windows | None = None
    notes: tuple[str, ...] = ()

    def note(self, *more: str) -> tuple[str, ...]:
        return (*self.notes, *more)

    @cached_property
    def trace_calls(self) -> tuple[tuple[EdgeStat, ...], tuple[EdgeStat, ...]]:
        """The baseline's and the alert window's spans paired into calls (Tempo's rule),
        once per plan for every trace scorer: pairing a busy window is most of their cost."""
        from stackgraph.ingest.lanes.telemetry import stats_from_spans

        base, alert = self.traces
        return tuple(stats_from_spans(base)[0]), tuple(stats_from_spans(alert)[0])


def num(value: Any) -> float | None:
    """A stored property as a float, or None when absent or not a number."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
