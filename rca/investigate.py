"""`investigate(store, alert)` → a ranked, explained `Plan`. Fail-open by contract.

alert labels → anchor Service → generators (k-hop neighbourhood, callers, deploys and
changes, incident history, metric probes) → scorers that vote or abstain (telemetry,
anomaly, change, history, PageRank blame, traversal from the symptom, onset order) →
reciprocal rank fusion, ties by topology → ranked candidates.
"""

from __future__ import annotations

import time
from dataclasses import replace

from stackgraph.store import GraphReader, GraphStore

from .anchor import resolve_anchor
from .baseline import recorded_baseline
from .facts import Facts, Request
from .model import Alert, Candidate, LogSource, MetricsSource, Plan, SpanSource
from .neighbourhood import clamp_hops
from .pipeline import DEFAULT, Playbook, abstentions, combine, gather, score
from .read_time import UNAVAILABLE
from .windows import Windows


def windows_for(
    alert: Alert,
    at: float | None,
    playbook: Playbook,
    baseline: tuple[float, float] | None = None,
) -> Windows:
    """The alert window ends at `at` (or now). It starts `alert_lead_s` before the alert
    fired, since what caused it moved earlier (a rule rates over minutes, then waits its
    `for:`); without a firing time, `alert_span_s` before the end. A given baseline
    [b0, b1) with b1 < end is kept and the alert window starts no earlier than b1;
    otherwise the baseline is the `baseline_span_s` before the alert window."""
    end = float(at) if at is not None else time.time()
    fired = alert.starts_at
    if fired is not None and float(fired) <= end:
        start = float(fired) - playbook.alert_lead_s
    else:
        start = end - playbook.alert_span_s
    if baseline is not None and baseline[0] < baseline[1] < end:
        b0, b1 = float(baseline[0]), float(baseline[1])
        return Windows((max(start, b1), end), (b0, b1))
    return Windows((start, end), (start - playbook.baseline_span_s, start))


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
    playbook: Playbook = DEFAULT,
    baseline: tuple[float, float] | None = None,
    as_of: float | None = None,
) -> Plan:
    """Rank the likely root causes of `alert`.

    Fail-open: an empty, stale or unreachable graph, an unknown service or a failing
    metrics probe gives an empty or partial plan whose `reason`/`notes` say why; this
    function does not raise for them. `baseline` overrides the baseline window (e.g. the
    same hour yesterday); by default it is the `baseline_span_s` before the alert window.
    `as_of` answers on the graph as it was then (time travel: facts first seen later are
    left out, Stale/Active as they were then); `at` only places the windows, so a replay
    over a graph written today still sees it. Entry points call this through `Planner`,
    which brings the configured metrics, log and span sources and depth.
    """
    hops = clamp_hops(hops)
    limit = max(1, min(int(limit), 200))
    win = windows_for(alert, at, playbook, baseline)

    def plan(
        anchor: str | None,
        reason: str,
        ranked: list[Candidate] | None = None,
        notes: tuple[str, ...] = (),
        coverage: dict[str, list[str]] | None = None,
    ) -> Plan:
        return Plan(
            anchor=anchor,
            candidates=ranked or [],
            reason=reason,
            at=win.alert[1],
            playbook=playbook.name,
            hops=hops,
            window=win.alert,
            baseline=win.baseline,
            notes=notes,
            coverage=coverage or {},
        )

    try:
        anchor, why = resolve_anchor(store, alert, at=as_of)
        if anchor is None:
            return plan(None, why)
        request = Request(alert, win, hops, limit, metrics, logs, spans,
                          as_of=None if as_of is None else float(as_of))  # fmt: skip
        facts = gather(store, request, Facts(anchor.name, {anchor.name: anchor}, windows=win),
                       playbook)  # fmt: skip
        moved = None
        unreachable = any(n.startswith(UNAVAILABLE) for n in facts.notes)
        if baseline is None and metrics is not None and not facts.probes and not unreachable:
            try:
                moved = recorded_baseline(metrics, anchor.name, win)
            except Exception as exc:  # a remote call: the plan stands without it
                facts = replace(facts, notes=facts.note(f"no older baseline found: {exc}"))
        if moved is not None:  # nothing could be compared: again, against the data there is
            win = moved[0]
            request = replace(request, windows=win)
            facts = Facts(anchor.name, {anchor.name: anchor}, windows=win, notes=moved[1:])
            facts = gather(store, request, facts, playbook)
        signals = score(facts, playbook)
        ranked = combine(facts, signals, playbook)
    except Exception as exc:  # the fail-open boundary: any store/driver failure becomes a reason
        return plan(None, f"investigation failed open: {type(exc).__name__}: {exc}")
    notes = [*facts.notes, *abstentions(signals)]
    if baseline is not None and win.baseline != (float(baseline[0]), float(baseline[1])):
        notes.append(
            "the baseline asked for does not end before the alert window's end; "
            f"the {playbook.baseline_span_s / 60:.0f} minutes before the alert window were used"
        )
    reason = ""
    if len(facts.nodes) <= 1:
        reason = f"{anchor.name} has no known dependencies in the graph; only itself is ranked"
    edge_status = [e.status for e in facts.edges]
    if edge_status and all(s == "Stale" for s in edge_status):
        notes.append("every dependency edge around the anchor is Stale; telemetry counts half")
    coverage = {n: sorted(s.covered) for n, s in signals.items() if s.covered is not None}
    return plan(anchor.name, reason, ranked[:limit], tuple(notes), coverage)
