"""Traces as evidence: calls that failed by their logs, and the trace structure of the alert
window (after GALA+'s STRIX). All read the span source (`Facts.traces`); the fusion counts
them as one source.

- **failed_calls**: spans carry no status in many tracers, but a log line written inside a
  span (its trace and span id) says what happened there. A call whose callee logged an
  ERROR line while handling it (in the span that received the call or one below it in the
  same service) failed. The frontier rule of `telemetry` on those failures: a service whose
  incoming calls fail more than in the baseline while its own outgoing calls do not; a call
  the baseline never saw gets no verdict.
- **instability**: p99 / p50 of the durations of the calls a service received (a service
  that is sometimes very slow), for services with MIN_SPANS of them in both windows. A call
  is timed by the span that received it; the spans below it in the same service are parts
  of it (the rule of `failed_calls`).
- **self_time**: a service's mean call duration x max(0, 1 - (its slowest callee's mean
  call duration / its own mean)): time per call spent in the service itself, not waiting on
  callees (STRIX weighs it by traffic; a change test compares per call, so a window's
  length or load does not move it).
- **centrality**: PageRank on the window's call graph x (1 + in-degree) / (1 + out-degree):
  a service many calls depend on, itself depending on few. Structure, not change: a prior
  that breaks ties (like `topology`), no vote.

Instability and self time are levels, and a level is no evidence of a fault (the rule of
`telemetry`): each votes by its rise from the baseline window to the alert window
(`relative_change`), counted like latency, once it doubles (`DOUBLING`). A service without
spans in the baseline gets no verdict, and neither does one whose baseline self time is
the clip's zero (its slowest callee's mean above its own: calls made asynchronously, or a
callee slowed by other callers): that zero was not measured, so no rise from it is. Each
abstains without spans in the alert window; failed_calls also without a log line that
names its span.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from stackgraph.ingest.lanes.telemetry import USER_CLIENT, EdgeStat, Span, stats_from_spans

from ..facts import Facts
from ..model import Evidence
from ..series import DOUBLING, ERROR_HALF, relative_change
from .blame import personalised_pagerank
from .logs import ERROR_LEVELS
from .signal import Signal, all_nodes, votes

MIN_SPANS = 20
"""A p99 over fewer spans is the slowest one, not a tail."""


def _failed_ids(facts: Facts) -> set[tuple[str, str]]:
    return {
        (line.trace_id, line.span_id)
        for base, alert in facts.logs.values()
        for line in (*base, *alert)
        if line.level in ERROR_LEVELS and line.span_id
    }


def _handling(spans: Sequence[Span], failed: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The spans a failure belongs to: the one its line names, and its ancestors in the same
    service up to the one that received the call. A service handles a call in a span tree of
    its own (controller, then implementation spans), and a line logged anywhere in it is
    that call's."""
    by_id = {(s.trace_id, s.span_id): s for s in spans}
    marked: set[tuple[str, str]] = set()
    for key in failed:
        span = by_id.get(key)
        while span is not None and (span.trace_id, span.span_id) not in marked:
            marked.add((span.trace_id, span.span_id))
            parent = by_id.get((span.trace_id, span.parent_id)) if span.parent_id else None
            span = parent if parent is not None and parent.service == span.service else None
    return marked


def _edge_errors(
    spans: Sequence[Span], failed: set[tuple[str, str]]
) -> dict[tuple[str, str], EdgeStat]:
    failed = _handling(spans, failed)
    marked = [replace(s, error=True) if (s.trace_id, s.span_id) in failed else s for s in spans]
    stats, _ = stats_from_spans(marked)
    return {(s.client, s.server): s for s in stats if s.client != USER_CLIENT}


def failed_calls(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    base, alert = facts.traces
    failed = _failed_ids(facts)
    if not alert:
        return votes("failed_calls", {}, abstained="no spans in the alert window")
    if not failed:
        return votes("failed_calls", {}, abstained="no error line names the span it was in")
    now, before = _edge_errors(alert, failed), _edge_errors(base, failed)
    move: dict[tuple[str, str], float] = {}
    for key, e in now.items():
        if key not in before:  # no calls to compare with: a failure rate could be usual
            continue
        rise = max(0.0, e.error_rate - before[key].error_rate)
        move[key] = rise / (rise + ERROR_HALF)
    if not move:
        return votes("failed_calls", {}, abstained="no call of the alert window in the baseline")
    into: dict[str, tuple[float, tuple[str, str]]] = {}
    out_of: dict[str, float] = defaultdict(float)
    for (c, s), v in move.items():
        if v > into.get(s, (0.0, ("", "")))[0]:
            into[s] = (v, (c, s))
        out_of[c] = max(out_of[c], v)
    nodes = all_nodes(facts)
    scores: dict[str, float] = {}
    evidence: dict[str, tuple[Evidence, ...]] = {}
    for svc, (v, (c, s)) in into.items():
        if svc not in nodes:
            continue
        scores[svc] = max(0.0, v - out_of[svc])
        if scores[svc] > 0:
            e = now[(c, s)]
            was = f"{100 * before[(c, s)].error_rate:.0f}%"
            evidence[svc] = (
                Evidence("failed_calls", f"{c}→{s}: {100 * e.error_rate:.0f}% of "
                         f"{int(e.trace_count)} calls logged an error in the callee's span "
                         f"(baseline {was}); its own calls: {out_of[svc]:.2f}", "traces+logs",
                         round(scores[svc], 4), f"calls:{c}->{s}"),
            )  # fmt: skip
    return votes("failed_calls", scores, evidence, covered={s for _, s in move if s in nodes})


def _by_service(spans: Sequence[Span]) -> dict[str, np.ndarray]:
    """Per service, the durations of the calls it received: its spans whose parent is in
    another service (or unknown). The spans below them in the same service are parts of
    those calls, and its client spans are its callees' time."""
    service = {(s.trace_id, s.span_id): s.service for s in spans}
    out: dict[str, list[float]] = defaultdict(list)
    for s in spans:
        if s.service and service.get((s.trace_id, s.parent_id)) != s.service:
            out[s.service].append(s.duration_ms)
    return {k: np.asarray(v) for k, v in out.items()}


def _rise(now: float, before: float) -> float:
    change = relative_change(now, before)
    return change if change >= DOUBLING else 0.0


def _instability(spans: Sequence[Span]) -> dict[str, tuple[float, int]]:
    return {
        svc: (float(np.percentile(d, 99)) / p50, len(d))
        for svc, d in _by_service(spans).items()
        if len(d) >= MIN_SPANS and (p50 := float(np.percentile(d, 50))) > 0
    }


def instability(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    base, alert = facts.traces
    if not alert:
        return votes("instability", {}, abstained="no spans in the alert window")
    nodes = all_nodes(facts)
    now = _instability([s for s in alert if s.service in nodes])
    before = _instability([s for s in base if s.service in nodes])
    judged = [svc for svc in now if svc in before]
    if not judged:
        return votes("instability", {}, abstained=f"no service with {MIN_SPANS} spans in both "
                     "windows")  # fmt: skip
    scores = {svc: _rise(now[svc][0], before[svc][0]) for svc in judged}
    evidence = {svc: (Evidence("instability", f"p99/p50 of its {now[svc][1]} spans: "
                               f"{now[svc][0]:.1f}, baseline {before[svc][0]:.1f}", "traces",
                               round(v, 3), f"spans:{svc}"),)
                for svc, v in scores.items() if v > 0}  # fmt: skip
    return votes("instability", scores, evidence, covered=judged)


def centrality(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    stats = facts.trace_calls[1]
    calls = [(s.client, s.server) for s in stats if s.client != USER_CLIENT]
    if not calls:
        return votes("centrality", {}, abstained="no calls among the alert window's spans")
    names = sorted({n for c in calls for n in c})
    idx = {n: i for i, n in enumerate(names)}
    fan_in: dict[str, int] = defaultdict(int)
    fan_out: dict[str, int] = defaultdict(int)
    for c, s in calls:
        fan_in[s] += 1
        fan_out[c] += 1
    pr = personalised_pagerank(names, [(idx[c], idx[s], 1.0) for c, s in calls], None)
    scores = {n: float(pr[idx[n]]) * (1 + fan_in[n]) / (1 + fan_out[n]) for n in names}
    evidence = {n: (Evidence("centrality", f"PageRank x (1 + {fan_in[n]} in) / (1 + {fan_out[n]} "
                             f"out) on the window's call graph: {v:.3f}", "traces",
                             round(v, 4), f"spans:{n}"),) for n, v in scores.items()}  # fmt: skip
    return votes("centrality", scores, evidence, covered=names)


def _self_time(spans: Sequence[Span], stats: Sequence[EdgeStat]) -> dict[str, float]:
    """Milliseconds per call each service spends in its own spans, beyond its slowest callee."""
    durations = _by_service(spans)
    callees: dict[str, list[str]] = defaultdict(list)
    for s in stats:
        if s.client != USER_CLIENT:
            callees[s.client].append(s.server)
    mean = {svc: float(d.mean()) for svc, d in durations.items()}
    out: dict[str, float] = {}
    for svc, m in mean.items():
        slowest = max((mean.get(c, 0.0) for c in callees[svc]), default=0.0)
        out[svc] = m * max(0.0, 1.0 - slowest / m) if m else 0.0
    return out


def self_time(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    base, alert = facts.traces
    if not alert:
        return votes("self_time", {}, abstained="no spans in the alert window")
    calls_base, calls_alert = facts.trace_calls
    now, before = _self_time(alert, calls_alert), _self_time(base, calls_base)
    nodes = all_nodes(facts)
    judged = [svc for svc in now if svc in nodes and before.get(svc, 0.0) > 0]
    if not judged:
        return votes("self_time", {}, abstained="no service with its own time in both windows")
    scores = {svc: _rise(now[svc], before[svc]) for svc in judged}
    evidence = {svc: (Evidence("self_time", f"{now[svc]:.1f} ms per call in its own spans beyond "
                               f"its slowest callee, baseline {before[svc]:.1f} ms", "traces",
                               round(v, 3), f"spans:{svc}"),)
                for svc, v in scores.items() if v > 0}  # fmt: skip
    return votes("self_time", scores, evidence, covered=judged)
