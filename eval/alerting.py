"""When a replayed incident's alert fires: found in the data, not taken from the label.

An alerting rule on the symptom service's own error rate or latency (`for: 1m`) fires at
the first point that leaves the baseline band and stays out for a minute. The band is the
read path's own notion of "out" (`rca.series.out_of_band`, upward),
and the series are read from the same metrics source the read path probes, so the alert
sees what the investigation sees. The labelled fault start only bounds the search (an
incident's alert cannot fire before its fault) and the next fault ends it.

Where the symptom has no such series, or none leaves the band before the next fault, the
alert is the one the experiment itself recorded, if the dataset kept it (ChangeRCA does);
failing that it fires FALLBACK_DELAY_S after the fault start. The scorecard counts each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stackgraph.rca.model import MetricsSource
from stackgraph.rca.series import out_of_band

__all__ = ["FALLBACK_DELAY_S", "FOR_S", "SYMPTOM_KINDS", "AlertTime", "detect_alert"]

FOR_S = 60.0
"""The rule's `for:`: out of band this long before it fires."""
FALLBACK_DELAY_S = 120.0
"""Without a detection: the fault start plus a rule's `for: 1m` and a 1-minute evaluation."""
SYMPTOM_KINDS = ("errors", "latency")
"""What an alert on a service watches: its own error ratio and p95 as a server."""


@dataclass(frozen=True)
class AlertTime:
    """When the alert fired and why then."""

    fired_at: float
    how: str
    """"detected" | "recorded" (the dataset's own alert; the symptom's series showed
    nothing) | "no signal" (no error/latency series, fixed delay) | "in band" (they stayed
    in band until the next fault, fixed delay)."""
    signal: str | None = None
    first_out: float | None = None


def _fires(
    kind: str, baseline: Sequence[float], points: Sequence[tuple[float, float]], horizon: float
) -> tuple[float, float] | None:
    """(first point out, firing time) of the first stretch out of band for FOR_S, or None."""
    times = np.array([t for t, _ in points], dtype=float)
    values = np.array([v for _, v in points], dtype=float)
    out = out_of_band(baseline, values, kind) & (values > float(np.median(baseline)))
    for i in np.nonzero(out)[0]:
        fire = float(times[i]) + FOR_S
        if fire >= horizon:
            return None
        held = (times >= times[i]) & (times <= fire)
        if times[held][-1] >= fire and bool(out[held].all()):
            return float(times[i]), fire
    return None


def detect_alert(
    source: MetricsSource,
    service: str,
    fault_start: float,
    horizon: float,
    baseline: tuple[float, float],
    recorded: float | None = None,
) -> AlertTime:
    """The earliest firing over SYMPTOM_KINDS between `fault_start` and `horizon`; else the
    `recorded` alert; else the fixed delay."""
    fallback = min(fault_start + FALLBACK_DELAY_S, horizon)
    kinds = [k for k in source.kinds(service, baseline[0], horizon) if k in SYMPTOM_KINDS]
    best: AlertTime | None = None
    seen = False
    for kind in kinds:
        base = [v for t, v in source.points(service, kind, *baseline) if t < baseline[1]]
        points = list(source.points(service, kind, fault_start, horizon))
        if not base or not points:
            continue
        seen = True
        found = _fires(kind, base, points, horizon)
        if found is not None and (best is None or found[1] < best.fired_at):
            best = AlertTime(found[1], "detected", kind, found[0])
    if best is not None:
        return best
    if recorded is not None and fault_start <= recorded < horizon:
        return AlertTime(recorded, "recorded")
    return AlertTime(fallback, "in band" if seen else "no signal")
