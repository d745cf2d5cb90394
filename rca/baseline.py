"""A baseline that holds data: when the span before the alert window has none.

The default baseline is the `baseline_span_s` before the alert window. A scrape gap, a
restarted Prometheus, a service idle overnight or a recording made apart from the incident
can leave it empty, and then no series can be compared and the plan falls back to topology
order, silently worse. A comparison needs a baseline, and the newest data the source still
holds is the best one on offer: the baseline moves back to end where the symptom service's
series last had data, and the plan's note says how far back that was. A symptom with no
series of its own (a load balancer or managed front that exports nothing, an entry known
only by its alert) says nothing of where data is: then its neighbours in the graph, the
services it calls or that call it, say it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from stackgraph.prometheus import MAX_POINTS

from .model import MetricsSource
from .windows import Windows

RETENTION_S = 15 * 86400.0
"""How far back to look: Prometheus' default retention (`--storage.tsdb.retention.time`,
15 d). No separate cut-off: any data the source still keeps beats comparing with nothing."""


def recorded_baseline(
    metrics: MetricsSource, services: Sequence[str], win: Windows,
    lookback_s: float = RETENTION_S,
) -> tuple[Windows, str] | None:  # fmt: skip
    """`win` with its baseline moved back to end at the last data before the default
    baseline of the first of `services` (the symptom, then its neighbours) that has any,
    and a note saying so; None when that service has data in the default baseline, or
    none of them has any in the `lookback_s` before the alert window."""
    b0, b1 = win.baseline
    span = b1 - b0
    search = (win.start - lookback_s, win.start)
    found = next(((s, t) for s in services
                  if math.isfinite(t := _last_reading(metrics, s, search))), None)  # fmt: skip
    if found is None or found[1] >= b0:
        return None
    service, last = found
    # Prometheus widens the step of so long a range (at most MAX_POINTS a series): end one
    # such step past the last point seen, never inside the default baseline.
    step = (search[1] - search[0]) / MAX_POINTS
    end = min(last + step, b0)
    moved = Windows(win.alert, (end - span, end))
    whose = "its" if service == services[0] else f"{service}'s (it has none of its own)"
    note = (
        f"no data of {services[0]} in the {span / 60:g} min before the alert window; the "
        f"baseline is the {span / 60:g} min before {whose} last recorded data, "
        f"{(win.start - end) / 3600:.1f} h before the alert window"
    )
    return moved, note


def _last_reading(metrics: MetricsSource, service: str, search: tuple[float, float]) -> float:
    """When `service`'s newest finite reading in `search` was; -inf where it has none."""
    last = -math.inf
    for kind in metrics.kinds(service, *search):
        points = metrics.points(service, kind, *search)
        last = max([last, *(t for t, v in points if math.isfinite(v) and t < search[1])])
    return last
