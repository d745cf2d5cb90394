"""The read path's records: an alert in, a ranked plan out. Stable across the API, the
agent, the CLI and the replay harness."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from stackgraph.ingest.lanes.telemetry import Span


@dataclass(frozen=True)
class Alert:
    """What fired: Alertmanager labels/annotations, when, and its fingerprint."""

    labels: Mapping[str, str]
    annotations: Mapping[str, str] = field(default_factory=dict)
    starts_at: float | None = None
    """Epoch seconds; the alert window ends here (or at `at`)."""
    fingerprint: str | None = None
    status: str = "firing"


@dataclass(frozen=True)
class Evidence:
    """Why a signal scored what it did, with the provenance of the fact behind it."""

    signal: str
    summary: str
    source: str
    value: float | None = None
    ref: str | None = None
    status: str | None = None
    """Provenance of the fact: its status (Active, Stale...) and when it was last seen."""
    last_seen: float | None = None


@dataclass(frozen=True)
class Candidate:
    """One suspect root cause: its blended score, the breakdown, and how to check it."""

    service: str
    score: float
    signals: Mapping[str, float]
    paths: Sequence[Sequence[str]] = ()
    evidence: Sequence[Evidence] = ()
    suggested_tools: Sequence[str] = ()
    kind: str = "Service"
    position: str = "downstream"
    """Where it sits relative to the anchor: "anchor", "downstream", "upstream" or
    "unlinked" (in its namespace, where the graph links the anchor to nothing)."""


@dataclass(frozen=True)
class Plan:
    """The ranked plan. Empty candidates always come with a reason; never an exception."""

    anchor: str | None
    candidates: Sequence[Candidate]
    reason: str = ""
    at: float | None = None
    playbook: str = "default"
    hops: int = 2
    window: tuple[float, float] | None = None
    """The alert window the probes looked at, epoch seconds [start, end)."""
    baseline: tuple[float, float] | None = None
    notes: Sequence[str] = ()
    """What was partial: failed probes, truncated neighbourhoods, stale facts."""
    coverage: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """Per scorer whose data reached only some candidates: those it reached (none, for one
    that abstained)."""
    program: Mapping[str, Any] = field(default_factory=dict)
    """The program that produced it (`rca.investigate.program_view`): its bindings, the
    values chosen for `auto` parameters, the fusion's roles, the cost of each binding."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Plan:
        """The inverse of `to_dict` (also after a JSON round trip), so a stored plan
        is the plan again."""

        def span(v: Any) -> tuple[float, float] | None:
            return (float(v[0]), float(v[1])) if v else None

        cands = [
            Candidate(
                service=str(c["service"]),
                score=float(c["score"]),
                signals={str(k): float(v) for k, v in dict(c.get("signals") or {}).items()},
                paths=[list(p) for p in c.get("paths") or ()],
                evidence=[Evidence(**e) for e in c.get("evidence") or ()],
                suggested_tools=tuple(c.get("suggested_tools") or ()),
                kind=str(c.get("kind", "Service")),
                position=str(c.get("position", "downstream")),
            )
            for c in d.get("candidates") or ()
        ]
        return cls(anchor=d.get("anchor"), candidates=cands, reason=str(d.get("reason", "")),
                   at=d.get("at"), playbook=str(d.get("playbook", "default")),
                   hops=int(d.get("hops", 2)), window=span(d.get("window")),
                   baseline=span(d.get("baseline")), notes=tuple(d.get("notes") or ()),
                   coverage={str(k): [str(n) for n in v]
                             for k, v in dict(d.get("coverage") or {}).items()},
                   program=dict(d.get("program") or {}))  # fmt: skip


EDGE_PREFIX = "from:"
"""A kind `<group>/from:<caller>` is the edge caller → service as the caller sees it (Tempo
service-graph metrics carry `client`/`server` labels). The telemetry scorer reads these
per edge (frontier rule); the anomaly scorer counts them as the service's own
latency/errors, since that is the service as its callers receive it."""


class MetricsSource(Protocol):
    """A service's metrics at investigation time (live: `rca.sources.PrometheusMetrics`).

    `kind` is one of "latency", "errors", "cpu", "memory", "workload", "network", "other",
    optionally qualified by a series name after a slash ("network/rx", "latency/from:web")
    when a service has several series of one kind; scorers group on the part before it.
    Optional attributes: `source_name` (what evidence names as its source) and `span_s`
    (the finest span one reading covers, such as a rate's window).
    """

    def kinds(self, service: str, start: float, end: float) -> Sequence[str]:
        """The kinds that may hold data for `service` between start and end."""
        ...

    def points(
        self, service: str, kind: str, start: float, end: float
    ) -> Sequence[tuple[float, float]]:
        """(epoch seconds, value) pairs with start <= t <= end, oldest first."""
        ...


@dataclass(frozen=True)
class LogLine:
    """One log line of a service: when, its level word (ERROR, WARN, ..., or ""), its text,
    and the trace and span it was written in, when it says."""

    t: float
    service: str
    level: str
    text: str
    trace_id: str = ""
    span_id: str = ""


class LogSource(Protocol):
    """A service's log lines at investigation time (`rca.sources.logs`: Loki or files)."""

    where: str
    """What the lines are read from, as evidence summaries name it ("Loki", "log files")."""

    def lines(self, service: str, start: float, end: float) -> Sequence[LogLine]:
        """Lines with start <= t <= end, oldest first, at most `rca.sources.logs.MAX_LINES`."""
        ...


class SpanSource(Protocol):
    """Every service's spans at investigation time (`rca.sources.spans`: span files)."""

    def spans(self, start: float, end: float) -> Sequence[Span]:
        """Spans that ended with start <= end_s <= end."""
        ...
