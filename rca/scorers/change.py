"""Changes: a Deploy or Change of a candidate, weighed by what its service did after it.

Age from the alert window's start decays it (half-life ~21 min; later than the window's end
it cannot be a cause). Where metrics exist, timing decides whether it counts: a release
just before its own service's errors or latency leave their band is the classic bad change
(decaying with ONSET_TAU_S of delay). A release whose service's health did not move, when
the metrics could have shown it, or one after its service already misbehaved, is no
evidence of this incident: it stays in the evidence, and does not vote. A release too
recent for its service's series to show it (`series.could_show`: fewer than MIN_POINTS of
their finest span after it) was not judged by them: its onset is censored, known only to
lie after the window's end, and it counts at the timing weight's expectation past that
point (`CENSORED`), below a release whose service visibly moved as soon after it. Without
probes, presence and age alone count. Abstains when no candidate has a change.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence

from ..clock import iso
from ..facts import Facts, ProbeSeries
from ..model import Evidence
from ..series import MIN_POINTS, assess, could_show
from .onset import resolution
from .signal import STALE_FACTOR, Signal, votes
from .telemetry import CALL_KINDS

CHANGE_TAU_S = 1800.0
CHANGE_LOOKBACK_S = 6 * 3600.0
CHANGE_KIND_WEIGHT = {"Deploy": 1.0, "Change": 0.7}
ONSET_TAU_S = 300.0
"""A defective release shows within minutes of rolling out; later onsets count less."""
CENSORED = 0.5
"""What an onset known only to lie after the window's end, d after the release, is worth
against one seen d after it: the timing weight exp(-D / ONSET_TAU_S) is the delay model
D ~ Exp(ONSET_TAU_S), under which D - d is again Exp(ONSET_TAU_S) once D >= d
(memoryless), so the weight's expectation is exp(-d / ONSET_TAU_S) x 1/2."""


def onsets(facts: Facts) -> dict[str, tuple[float, str]]:
    """Per service: when its health (its own series of the kinds calls pass up to callers,
    `telemetry.CALL_KINDS`, and the calls into it as its callers see them) first left its
    band, with the series that moved first. A rollout replaces pods, so the released
    service's cpu and memory move by construction (fresh pods, warm-up); a defect shows in
    what its callers get."""
    out: dict[str, tuple[float, str]] = {}
    if facts.windows is None:
        return out
    for name, series in facts.probes.items():
        for s in series:
            if s.kind not in CALL_KINDS:
                continue
            t = assess(s, facts.windows.alert)
            if t.out and t.onset is not None and (name not in out or t.onset < out[name][0]):
                out[name] = (t.onset, f"{s.kind} {s.name}")
    return out


def finest(series: Sequence[ProbeSeries], default: float) -> float:
    """The finest span among the series `onsets` reads, each no finer than what one of its
    readings covers (a rate over a minute sampled every 15 s is a minute fine) nor than its
    values change (`onset.resolution`); `default` where none is known."""
    spans = [r for s in series if s.kind in CALL_KINDS and (r := max(resolution(s), s.span_s)) > 0]
    return min(spans, default=default)


def _sample_step(facts: Facts) -> float:
    """The probes' sampling step: onsets are known to a step, so a release within one step
    after an onset is not "before" it."""
    if facts.windows is None:
        return 0.0
    n = max((len(s.alert) for ss in facts.probes.values() for s in ss), default=0)
    a0, a1 = facts.windows.alert
    return (a1 - a0) / n if n else 0.0


def change(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    """Vote: each candidate's strongest change (module docstring)."""
    if facts.windows is None or not facts.changes:
        return votes("change", {}, abstained="no deploy or change of any candidate")
    scores: dict[str, float] = {}
    evidence: dict[str, list[Evidence]] = defaultdict(list)
    start, end = facts.windows.alert
    first = onsets(facts) if facts.probes else {}
    step = _sample_step(facts)
    for c in sorted(facts.changes, key=lambda c: (c.service, -c.at, c.ref)):
        if c.at > end or c.at < start - CHANGE_LOOKBACK_S:
            continue
        age = max(0.0, start - c.at)
        s = CHANGE_KIND_WEIGHT.get(c.kind, 0.5) * math.exp(-age / CHANGE_TAU_S)
        effect = ""
        if facts.probes:
            seen = first.get(c.service)
            fine = finest(facts.probes.get(c.service, ()), step)
            if seen is None and not could_show(c.at, end, fine):
                s *= math.exp(-(end - c.at) / ONSET_TAU_S) * CENSORED
                effect = (f"; released {end - c.at:.0f} s before the window's end, "
                          f"under {MIN_POINTS} x its series' {fine:.0f} s: too soon to show, "
                          "counted at half the weight of a move at the end")  # fmt: skip
            elif seen is None:
                s = 0.0
                effect = "; its service's errors/latency did not move (no vote)"
            elif seen[0] < c.at - step:
                s = 0.0
                effect = f"; its service's anomaly ({seen[1]}) started before it (no vote)"
            else:
                delay = max(0.0, seen[0] - c.at)
                s *= math.exp(-delay / ONSET_TAU_S)
                effect = f"; {seen[1]} of its service moved {delay / 60:.0f} min after it"
        if c.status == "Stale":
            s *= STALE_FACTOR
        scores[c.service] = max(scores.get(c.service, 0.0), s)
        if len(evidence[c.service]) < 3:
            when = f"{age / 60:.0f} min before the alert window" if age else "in the alert window"
            evidence[c.service].append(
                Evidence("change", f"{c.kind} {c.ref} at {iso(c.at)} ({when}){effect}",
                         c.source or "graph", round(s, 4), f"{c.kind}:{c.service}:{c.ref}",
                         c.status, c.at)
            )  # fmt: skip
    return votes("change", scores, {k: tuple(v) for k, v in evidence.items()})
