"""Generators over the read-time sources (metrics, logs, spans), not the graph. A failing
source leaves a note and a partial plan; an unreachable one is not asked again."""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from stackgraph.errors import SourceUnavailable
from stackgraph.store import GraphReader

from .facts import Facts, ProbeSeries, Request, num
from .model import MetricsSource
from .neighbourhood import candidate_names
from .windows import Windows

UNAVAILABLE = "metrics source unavailable"
"""How the probes' note begins when the source could not be reached (not asked again)."""

if TYPE_CHECKING:
    from stackgraph.ingest.lanes.telemetry import Span


PROBE_WORKERS = 8
"""Candidates probed at once. A probe is a few range queries that mostly wait on
Prometheus; eight stay well under its default query concurrency (20), so plans running
side by side do not queue each other's queries."""


@dataclass
class _Probed:
    series: list[ProbeSeries] = field(default_factory=list)
    failed: Exception | None = None


def probes(store: GraphReader, req: Request, facts: Facts, workers: int = PROBE_WORKERS) -> Facts:
    """Each candidate's own metrics in the alert and baseline windows, via MetricsSource:
    the first candidate alone, then the others `workers` at a time, kept in the
    candidates' order whatever the timing.

    Reads metrics, not the graph. A failing probe is a note and the others still count;
    an unreachable source is noted once, and no probe starts after it was found (one that
    is down from the start is asked once).
    """
    metrics = req.metrics
    if metrics is None:
        return replace(facts, notes=facts.note("no metrics source: live probes skipped"))
    source = str(getattr(metrics, "source_name", type(metrics).__name__))
    span = float(getattr(metrics, "span_s", 0.0))
    down: list[SourceUnavailable] = []  # the first probe to find the source unreachable

    def one(name: str) -> _Probed | None:
        """None: not probed, the source was found unreachable (by this probe or before)."""
        if down:
            return None
        got = _Probed()
        try:
            for kind in metrics.kinds(name, req.windows.baseline[0], req.windows.alert[1]):
                probe = _probe(metrics, name, str(kind), req.windows, span)
                if probe is not None:
                    got.series.append(probe)
        except SourceUnavailable as exc:
            down.append(exc)
            return None
        except Exception as exc:  # a probe is a remote call; any failure leaves a partial plan
            got.failed = exc
        return got

    names = candidate_names(facts)
    probed = {names[0]: one(names[0])} if names else {}  # alone: does the source answer?
    with ThreadPoolExecutor(max_workers=workers) as pool:
        probed |= dict(zip(names[1:], pool.map(one, names[1:]), strict=True))
    out: dict[str, list[ProbeSeries]] = {k: list(v) for k, v in facts.probes.items()}
    notes: list[str] = []
    for name, got in probed.items():
        if got is not None and got.series:
            out.setdefault(name, []).extend(got.series)
        if got is not None and got.failed is not None:
            notes.append(f"metrics probe for {name!r} failed: {type(got.failed).__name__}: "
                         f"{got.failed}")  # fmt: skip
    if down:
        missed = sum(1 for got in probed.values() if got is None)
        notes.append(f"{UNAVAILABLE}, {missed} candidate(s) not probed: {down[0]}")
    return replace(
        facts,
        probes={k: tuple(v) for k, v in out.items()},
        probe_source=source,
        notes=facts.note(*notes),
    )


def _probe(
    metrics: MetricsSource, name: str, kind: str, win: Windows, span: float
) -> ProbeSeries | None:
    """One kind of one service in both windows: baseline [b0, b1), alert [a0, a1]. One
    query covers both when they touch (the default), two when a gap lies between."""
    (a0, a1), (b0, b1) = win.alert, win.baseline
    if b1 >= a0:
        both = _finite(metrics.points(name, kind, b0, a1))
        base = [v for t, v in both if b0 <= t < min(b1, a0)]
        alert = [(t, v) for t, v in both if t >= a0]
    else:
        base = [v for t, v in _finite(metrics.points(name, kind, b0, b1)) if t < b1]
        alert = list(_finite(metrics.points(name, kind, a0, a1)))
    if not base or not alert:
        return None
    group, _, series = kind.partition("/")
    return ProbeSeries(group, series or group, tuple(base), tuple(v for _, v in alert),
                       tuple(t for t, _ in alert), span)  # fmt: skip


def _finite(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for t, v in points:
        x, when = num(v), num(t)
        if x is not None and when is not None and math.isfinite(x):
            out.append((when, x))
    return out


def logs(store: GraphReader, req: Request, facts: Facts) -> Facts:
    """Each candidate's log lines in the baseline and alert windows, via LogSource. Reads
    logs, not the graph; an unreachable source is noted once and not asked again."""
    source = req.logs
    if source is None:
        return replace(facts, notes=facts.note("no log source: log lines not read"))
    (a0, a1), (b0, b1) = req.windows.alert, req.windows.baseline
    out = dict(facts.logs)
    notes: list[str] = []
    names = candidate_names(facts)
    for i, name in enumerate(names):
        try:
            base = tuple(x for x in source.lines(name, b0, b1) if x.t < b1)
            alert = tuple(source.lines(name, a0, a1))
        except SourceUnavailable as exc:
            notes.append(f"log source unavailable, {len(names) - i} candidate(s) not read: {exc}")
            break
        except Exception as exc:  # a remote call; a failure leaves a partial plan
            notes.append(f"log lines of {name!r} failed: {type(exc).__name__}: {exc}")
            continue
        if base or alert:
            out[name] = (base, alert)
    return replace(facts, logs=out, notes=facts.note(*notes))


def around(spans: Sequence[Span], names: set[str]) -> tuple[Span, ...]:
    """The spans of `names` and the spans one call away from them (their parents and
    children in other services): every call into or out of a candidate, and no more, so a
    plan's trace work grows with its neighbourhood, not with the whole system's traffic."""
    mine = {(s.trace_id, s.span_id) for s in spans if s.service in names}
    parents = {(s.trace_id, s.parent_id) for s in spans if s.service in names and s.parent_id}
    return tuple(
        s for s in spans
        if (s.trace_id, s.span_id) in mine or (s.trace_id, s.span_id) in parents
        or (s.trace_id, s.parent_id) in mine
    )  # fmt: skip


def traces(store: GraphReader, req: Request, facts: Facts) -> Facts:
    """The spans around the candidates (`around`) in the baseline and alert windows, via
    SpanSource."""
    source = req.spans
    if source is None:
        return replace(facts, notes=facts.note("no span source: trace structure not read"))
    (a0, a1), (b0, b1) = req.windows.alert, req.windows.baseline
    names = set(candidate_names(facts))
    try:
        base = around([s for s in source.spans(b0, b1) if s.end_s < b1], names)
        alert = around(source.spans(a0, a1), names)
    except Exception as exc:  # a source is outside the graph; its failure leaves a partial plan
        return replace(facts, notes=facts.note(f"spans failed: {type(exc).__name__}: {exc}"))
    return replace(facts, traces=(base, alert))
