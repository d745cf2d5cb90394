"""How `prometheus_query` judges its readings of one signal: each window read (the long
one, the last 5 minutes, the read path's rate window before the alert) against the
baseline, by levels and rises that hold for any service (an error ratio, a p95) or by rise
alone (cpu, memory, which have no healthy level without the pod's limits). Pure: readings
in, a verdict out; the tool's reads are in `tools_prometheus`."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ..series import MIN_POINTS, out_of_band
from .downstream import explained_by
from .evidence import Verdict, optional_number
from .toolbox import ToolResult, ToolStatus

ERROR_RATIO_BAD = 0.05
"""An error ratio at or above this in the window, at least doubled vs the baseline, supports."""
ERROR_RATIO_OK = 0.01
"""An error ratio below this in the window, and not doubled vs the baseline, refutes: low
but risen is a change, not health (as latency refutes only when steady)."""
ERROR_RISE = 2.0
P95_RISE = 1.5
"""p95 at least this many times the baseline's, and P95_RISE_MIN_S slower, supports."""
P95_RISE_MIN_S = 0.1
RESOURCES = frozenset({"cpu", "memory"})
"""Signals with no healthy level: alone, a reading of them says nothing (`judge`)."""
RESOURCE_RISE = 2.0
"""CPU cores or working-set bytes at least doubled vs the baseline supports: the doubling is
the read path's unit of change (`rca.series`). Resources have no healthy level without the
pod's limits, so nothing here refutes: a service can fail without using more."""
P95_STEADY = 1.2
P95_OK_S = 0.5
"""p95 under this and at most P95_STEADY times the baseline's refutes."""
P95_FAST_S = 0.3
"""Without a baseline, a p95 at or below this refutes; none supports. A p95 has no healthy
level that holds for every service (a booking is slow every day), so a level alone cannot
say it changed: a signal points at a suspect only if it is worse than its own baseline
(`rca.windows`). Errors differ: a healthy service does not fail 5% of its calls."""

SHORTER = ("short", "latest")
"""The windows read beside the long one, each shorter than the last: the 5 minutes before
the alert and the read path's rate window (`tools_prometheus.SHORT_S`)."""
BAND_OF: Mapping[str, str] = MappingProxyType({"error_rate": "errors", "latency_p95": "latency"})
"""signal → the read path's kind whose band rule (`rca.series.out_of_band`) judges it."""


def window_shares(data: Mapping[str, Any], long_s: float) -> dict[str, float]:
    """Each window read, with its length over the long one's."""
    shares = {"window": 1.0}
    for key in SHORTER:
        if data.get(key) is not None:
            shares[key] = float(data.get(f"{key}_s") or long_s) / long_s
    return shares


def supporting_windows(data: Mapping[str, Any], long_s: float) -> dict[str, float]:
    """The windows whose reading supports (`judge`): the latest only beyond the band of
    the baseline's readings over as short a span (`BAND_OF`), since one minute's reading
    wanders more than half an hour's."""
    b = optional_number(data.get("baseline"))
    signal = str(data["signal"])
    return {
        key: part
        for key, part in window_shares(data, long_s).items()
        if judge(signal, float(data[key]), b, part) == Verdict.SUPPORTS
        and (key != "latest" or _beyond_band(signal, data))
    }


def _beyond_band(signal: str, data: Mapping[str, Any]) -> bool:
    band = [float(v) for v in data.get("latest_band") or ()]
    if len(band) < MIN_POINTS:
        return False  # too few readings to know how far one minute wanders
    return bool(out_of_band(band, [float(data["latest"])], BAND_OF.get(signal, signal))[0])


def check(result: ToolResult, suspect: str, now: float, window_s: float) -> Verdict:
    """Each window judged against the baseline (`judge`): any supporting supports, all
    refuting refutes, else inconclusive. The long window sees a fault that began up to
    `window_s` ago; the shorter ones a fault of the last minutes that it dilutes. A series
    with no data in the shorter windows stopped before the alert (a Stale edge's): what its
    long window shows happened before this incident, so it judges nothing. A cpu or memory
    reading with no baseline of its own says nothing alone; where the plan's baseline lies
    inside the long window (`tools_prometheus._inner_baseline`), the last 5 minutes are
    judged against it."""
    verdicts = {v for _, v in judged_windows(result, window_s)}
    if not verdicts:
        return Verdict.INCONCLUSIVE
    if Verdict.SUPPORTS in verdicts:
        return Verdict.SUPPORTS
    if verdicts == {Verdict.REFUTES}:
        return Verdict.REFUTES
    long_s = float(result.data.get("window_s") or window_s)
    b = optional_number(result.data.get("baseline"))
    inner = optional_number(result.data.get("inner_baseline"))
    short = optional_number(result.data.get("short"))
    share = window_shares(result.data, long_s).get("short", 1.0)
    # no baseline of its own: the last 5 minutes against the plan's, inside the window
    if (
        b is None
        and inner is not None
        and short is not None
        and judge(str(result.data["signal"]), short, inner, share) == Verdict.SUPPORTS
    ):
        return Verdict.SUPPORTS
    return Verdict.INCONCLUSIVE


def judged_windows(result: ToolResult, window_s: float) -> tuple[tuple[float, Verdict], ...]:
    """Each window judged (its length; each ends at the alert), with the verdict on the
    suspect's own reading there: supports where it supports (the latest beyond its band,
    `supporting_windows`) and no callee explains the rise (a rise its callee's calls show
    as strongly is the callee's, seen through the suspect), else `judge`'s healthy or
    middling. `check` weighs these; a change check reads them to tell a rise after a
    release from one before it (`evidence.Hypothesis.unmoved`). A stopped series judged
    nothing."""
    if result.status != ToolStatus.SUCCESS or result.data.get("stopped"):
        return ()
    data = result.data
    long_s = float(data.get("window_s") or window_s)
    own, b = _own_support(data, long_s), optional_number(data.get("baseline"))
    out = []
    for key, part in window_shares(data, long_s).items():
        verdict = judge(str(data["signal"]), float(data[key]), b, part)
        if key in own:
            verdict = Verdict.SUPPORTS
        elif verdict == Verdict.SUPPORTS:
            verdict = Verdict.INCONCLUSIVE  # within the latest's band, or a callee's rise
        out.append((part * long_s, verdict))
    return tuple(out)


def _own_support(data: Mapping[str, Any], long_s: float) -> dict[str, float]:
    """The supporting windows (`supporting_windows`), none where a callee explains them."""
    supporting = supporting_windows(data, long_s)
    callees = data.get("callees") or ()
    signal = str(data["signal"])
    if supporting and explained_by(signal, data, callees, judge, supporting) is not None:
        return {}
    return supporting


def judge(signal: str, w: float, b: float | None, share: float) -> Verdict:
    """Bad in the window and worse than the baseline supports; healthy refutes; a steady
    bad signal (chronic) or a middling one is inconclusive. `share` is the window's length
    over the baseline's, for counts (restarts); ratios, quantiles and rates need none."""
    if signal == "error_rate":
        if w >= ERROR_RATIO_BAD and (b is None or w >= ERROR_RISE * b):
            return Verdict.SUPPORTS
        if w < ERROR_RATIO_OK and (b is None or not w > b or w < ERROR_RISE * b):
            return Verdict.REFUTES
        return Verdict.INCONCLUSIVE
    if signal == "latency_p95":
        if b is None:
            return Verdict.REFUTES if w <= P95_FAST_S else Verdict.INCONCLUSIVE
        if w >= P95_RISE * b and w - b >= P95_RISE_MIN_S:
            return Verdict.SUPPORTS
        if w <= P95_STEADY * b and w < P95_OK_S:
            return Verdict.REFUTES
        return Verdict.INCONCLUSIVE
    if signal in RESOURCES:
        rose = b is not None and b > 0 and w >= RESOURCE_RISE * b
        return Verdict.SUPPORTS if rose else Verdict.INCONCLUSIVE
    # restarts: any restart in the window, more than the baseline's pace over its length
    if w >= 1 and w > (b or 0.0) * share:
        return Verdict.SUPPORTS
    return Verdict.INCONCLUSIVE
