"""One metric series judged against its baseline, robust to the baselines real systems give.

`assess(probe)` says whether the alert window left the baseline's band (its upper or lower
half, so one stray point is no change), how large the change is, when it left the band
(the first point of the part of the window mostly out of it: a spike before the fault is
not its onset, and a burst that ended has none), and which case applied (the evidence
repeats it):

| case | baseline | out of band when | effect |
|---|---|---|---|
| `noisy` | spread (MAD > 0) | >= OUT_Z robust units (1.4826·MAD) | relative |
| `flat` | constant, not zero | the level at least doubles or halves | relative |
| `from zero` | all zero | anything above zero | errors: their ratio; else a doubling |
| `short` | fewer than MIN_POINTS points | — (no verdict) | — |

The effect is the symmetric relative change (a - b) / (|a| + |b|) of the alert window's
upper (or lower) half against the baseline median: scale-free, so series of different
units and services compare, and bounded by 1, so no degenerate baseline can make it
explode. A change from
zero has no scale, so it counts only as much as the least change a flat baseline needs
(DOUBLING) — except for errors, a ratio with units of its own: errors appearing count by
how many calls fail (ERROR_HALF, 2%, scores one half). Latency counts only once it doubles
(a per-window percentile wanders by tens of percent). Latency and errors are judged
upwards only (a service getting faster or failing less is no symptom); every other kind
both ways.

Readings overlap: a rate over a minute read every 15 s carries one slow minute (a fresh
pod's first requests) into the readings within two spans of it, a quarter of a five-minute
window, and the larger half's mean doubles. Such a move, back in band by the window's end,
is none the alert (firing while its cause is present) reports: `_stray_span`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .facts import ProbeSeries

__all__ = [
    "DOUBLING",
    "ERROR_HALF",
    "MIN_POINTS",
    "OUT_Z",
    "SeriesTest",
    "assess",
    "could_show",
    "deviations",
    "out_of_band",
    "upper_half",
]

OUT_Z = 3.0
"""Robust units out of the baseline's band: the customary three-sigma rule, in MAD units."""
MIN_POINTS = 3
"""A median and a spread need three points; with fewer the baseline says nothing."""
DOUBLING = 1.0 / 3.0
"""The symmetric relative change of a doubling ((2b - b) / (2b + b)) or a halving."""
ERROR_HALF = 0.02
"""Errors appearing from none: a 2% failure ratio is half the strongest effect."""
UPWARD_ONLY = ("latency", "errors")


@dataclass(frozen=True)
class SeriesTest:
    """The verdict on one series: `effect` > 0 only when it left the band."""

    case: str
    effect: float = 0.0
    onset: float | None = None
    phrase: str = ""

    @property
    def out(self) -> bool:
        return self.effect > 0


def could_show(changed_at: float, until: float, span: float) -> bool:
    """Whether readings up to `until`, each `span` seconds fine, could show a change made at
    `changed_at`: they need MIN_POINTS readings of the new version, as a level and its
    spread do. A healthy reading taken sooner was, mostly or wholly, of the version before,
    and judges nothing of the change."""
    return until - changed_at >= MIN_POINTS * span


def upper_half(values: Sequence[float]) -> float:
    """Mean of the larger half: a fault lasting half the window is seen at full size."""
    v = sorted(values, reverse=True)
    top = v[: max(1, math.ceil(len(v) / 2))]
    return float(sum(top) / len(top)) if top else 0.0


def _lower_half(values: Sequence[float]) -> float:
    return -upper_half([-x for x in values])


def relative_change(a: float, b: float) -> float:
    """(a - b) / (|a| + |b|): in [-1, 1], 0 when both are 0."""
    den = abs(a) + abs(b)
    return (a - b) / den if den > 0 else 0.0


def deviations(baseline: npt.ArrayLike, values: npt.ArrayLike) -> np.ndarray:
    """Each value's signed distance from the baseline median in robust units (1.4826·MAD);
    +-inf for any move off a baseline without spread, 0 for none."""
    b = np.asarray(baseline, dtype=float)
    a = np.asarray(values, dtype=float)
    med = float(np.median(b))
    mad = 1.4826 * float(np.median(np.abs(b - med)))
    if mad > 0:
        return np.asarray((a - med) / mad)
    diff = a - med
    return np.asarray(np.where(diff > 0, np.inf, np.where(diff < 0, -np.inf, 0.0)))


def out_of_band(baseline: npt.ArrayLike, values: npt.ArrayLike, kind: str) -> np.ndarray:
    """Which values lie out of the baseline's band, in the kind's bad direction(s)."""
    b = np.asarray(baseline, dtype=float)
    a = np.asarray(values, dtype=float)
    med = float(np.median(b))
    dev = deviations(b, a)
    spread = bool(np.median(np.abs(b - med)) > 0)
    if spread:
        up, down = dev >= OUT_Z, dev <= -OUT_Z
    elif med == 0:
        up, down = a > 0, a < 0
    else:  # flat: at least double or half the level
        up = np.array([relative_change(x, med) >= DOUBLING for x in a], dtype=bool)
        down = np.array([relative_change(x, med) <= -DOUBLING for x in a], dtype=bool)
    if kind == "latency":  # a percentile wanders: only a doubling is a move
        up &= np.array([relative_change(x, med) >= DOUBLING for x in a], dtype=bool)
    return np.asarray(up if kind in UPWARD_ONLY else up | down)


def _sustained(out: np.ndarray) -> int | None:
    """Where the window's out-of-band part starts: its first reading out of band from which
    on most readings are (the upper-half rule: the part a fault holds), not a spike before
    it. None where no such part is left: a burst that ended is no onset of what the alert,
    firing while its cause is present, reports."""
    share = np.cumsum(out[::-1])[::-1] / np.arange(len(out), 0, -1)  # out of band from i on
    starts = np.nonzero(out & (share >= 0.5))[0]
    return int(starts[0]) if len(starts) else None


def _reading_times(probe: ProbeSeries, window: tuple[float, float] | None) -> np.ndarray | None:
    """When each alert-window reading was taken: as probed, else evenly over `window`."""
    n = len(probe.alert)
    if len(probe.alert_times) == n:
        return np.asarray(probe.alert_times, dtype=float)
    if window is None:
        return None
    return window[0] + np.arange(n) * (window[1] - window[0]) / n


def _stray_span(out: np.ndarray, times: np.ndarray | None, span_s: float) -> bool:
    """Whether the readings out of band are one span's worth that ended before the window
    did: readings overlap (each covers `span_s`), so one stray minute reaches those within
    two spans of it, and a move gone by the alert is none the alert reports."""
    hits = np.nonzero(out)[0]
    if not len(hits) or out[-1] or span_s <= 0 or times is None:
        return False
    return bool(times[hits[-1]] - times[hits[0]] < 2 * span_s)


def assess(probe: ProbeSeries, window: tuple[float, float] | None = None) -> SeriesTest:
    """The verdict on one probed series (see the module docstring)."""
    base, alert = probe.baseline, probe.alert
    if len(base) < MIN_POINTS:
        return SeriesTest("short", phrase=f"{probe.kind} {probe.name}: baseline of {len(base)}")
    if not alert:
        return SeriesTest("short", phrase=f"{probe.kind} {probe.name}: no alert points")
    med = float(np.median(base))
    spread = float(np.median(np.abs(np.asarray(base) - med))) > 0
    case = "noisy" if spread else ("from zero" if med == 0 else "flat")
    hi, lo = upper_half(alert), _lower_half(alert)
    summary = out_of_band(base, [hi, lo], probe.kind)  # the window's halves, not one point
    up = relative_change(hi, med) if summary[0] else 0.0
    down = -relative_change(lo, med) if summary[1] and probe.kind not in UPWARD_ONLY else 0.0
    effect = max(up, down)
    if effect > 0 and case == "from zero":
        effect = hi / (hi + ERROR_HALF) if probe.kind == "errors" else DOUBLING
    if effect <= 0:
        return SeriesTest(case, phrase=f"{probe.kind} {probe.name}: in band ({case})")
    out = out_of_band(base, alert, probe.kind)
    times = _reading_times(probe, window)
    if _stray_span(out, times, probe.span_s):
        return SeriesTest(case, phrase=f"{probe.kind} {probe.name}: one span out of band, "
                          f"back in band by the window's end ({case})")  # fmt: skip
    if not out.any():  # the halves left the band only together: the crossing is their span
        out = np.ones(len(alert), dtype=bool)
    first = _sustained(out)
    onset = float(times[first]) if first is not None and times is not None else None
    level = hi if up >= down else lo
    phrase = f"{probe.kind} {probe.name}: {med:.4g} → {level:.4g} ({case}, change {effect:.2f})"
    return SeriesTest(case, round(effect, 4), onset, phrase)
