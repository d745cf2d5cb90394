"""Scorers: pure functions from gathered facts to one signal per candidate, in [0, 1].

Each scorer returns a `Signal` (scores + the evidence behind them, with provenance) and
may read the signals scored before it (the blame scorer reads anomaly and telemetry).
Nothing here touches the store or the network.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from .clock import iso
from .facts import EdgeFact, Facts, NodeFact, ProbeSeries
from .model import EDGE_PREFIX, Evidence


@dataclass(frozen=True)
class Signal:
    name: str
    scores: Mapping[str, float]
    evidence: Mapping[str, tuple[Evidence, ...]] = field(default_factory=dict)


Scorer = Callable[[Facts, Mapping[str, Signal]], Signal]

STALE_FACTOR = 0.5
"""A Stale edge's telemetry counts half: it was true once, it may not be now."""

CRITICALITY = {"low": 0.25, "medium": 0.5, "high": 0.75, "critical": 1.0}

KIND_WEIGHT = {
    "cpu": 1.0,
    "memory": 1.0,
    "errors": 1.0,
    "latency": 0.8,
    "network": 0.7,
    "workload": 0.5,
    "other": 0.3,
}
"""Saturation and errors of a service's own are root-cause-like; latency and traffic also
move in victims, so they count a little less (blame propagation sorts victims out)."""

LATENCY_WEIGHT = 0.2
"""Exclusive p95 (what a callee adds over its own callees) without a baseline says where
time goes, not that something broke: it only breaks ties."""

ERROR_HALF = 0.02
"""An exclusive edge error rate of 2% scores 0.5."""

Z_FLOOR, Z_SCALE = 2.0, 4.0
"""Robust z-scores under 2 are noise; the score then saturates over ~4 more."""

CHANGE_TAU_S = 1800.0
CHANGE_LOOKBACK_S = 6 * 3600.0
CHANGE_KIND_WEIGHT = {"Deploy": 1.0, "Change": 0.7}


def all_nodes(facts: Facts) -> dict[str, NodeFact]:
    nodes = dict(facts.nodes)
    nodes.setdefault(facts.anchor, NodeFact(facts.anchor, position="anchor"))
    return nodes


def _f(x: float | None) -> float:
    return 0.0 if x is None else float(x)


# -- topology ---------------------------------------------------------------------------


def topology(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    """Criticality, fan-in (many dependants → wide blast radius) and position.

    Downstream nodes get more than the anchor, callers of the anchor less: faults mostly
    propagate from callee to caller. A small weight: it ranks ties, it does not decide.
    """
    nodes = all_nodes(facts)
    max_in = max((n.fan_in for n in nodes.values()), default=0)
    pos = {"downstream": 1.0, "anchor": 0.6, "upstream": 0.3}
    scores: dict[str, float] = {}
    evidence: dict[str, tuple[Evidence, ...]] = {}
    for name, n in nodes.items():
        crit = CRITICALITY.get(n.criticality or "", 0.5)
        fan = math.log1p(n.fan_in) / math.log1p(max_in) if max_in > 0 else 0.0
        p = pos.get(n.position, 0.5)
        scores[name] = 0.4 * crit + 0.3 * fan + 0.3 * p
        where = (
            "the alerting service"
            if n.position == "anchor"
            else f"{n.depth} hop(s) {n.position} of {facts.anchor}"
        )
        summary = (
            f"criticality {n.criticality or 'unknown'}, fan-in {n.fan_in}, "
            f"fan-out {n.fan_out}; {where}"
        )
        evidence[name] = (
            Evidence(
                "topology",
                summary,
                n.source or "graph",
                scores[name],
                f"{n.label}:{name}",
                n.status,
                n.last_seen,
            ),
        )
    return Signal("topology", scores, evidence)


# -- telemetry on edges -------------------------------------------------------------------


def edge_probes(facts: Facts) -> dict[tuple[str, str], list[ProbeSeries]]:
    """The per-edge series among the probes, keyed (caller, callee)."""
    out: dict[tuple[str, str], list[ProbeSeries]] = defaultdict(list)
    for callee, series in facts.probes.items():
        for s in series:
            if s.name.startswith(EDGE_PREFIX):
                out[(s.name[len(EDGE_PREFIX) :], callee)].append(s)
    return out


LATENCY_DOUBLINGS = 1.0
"""Edge latency must more than double (2^1) to count: a per-edge percentile wanders by
tens of percent minute to minute, and a short baseline under-states that (robust z alone
would call 3 ms → 5 ms a large anomaly)."""


def upper_half(values: tuple[float, ...]) -> float:
    """Mean of the larger half: a fault lasting half the window is seen at full size."""
    v = sorted(values, reverse=True)
    top = v[: max(1, math.ceil(len(v) / 2))]
    return float(sum(top) / len(top)) if top else 0.0


def edge_strength(s: ProbeSeries) -> tuple[float, str]:
    """How far an edge series moved from its baseline, in [0, 1], and a phrase saying so.

    Latency is multiplicative (a slow callee or a delayed link multiplies it), so it counts
    in doublings of the upper half over the baseline median beyond LATENCY_DOUBLINGS; an
    error ratio counts by how much it rose (ERROR_HALF scores 0.5). Either must also clear
    the robust z floor, so a move inside the baseline's own noise does not count.
    """
    z = robust_z(s.baseline, s.alert)
    med_b, high = float(np.median(s.baseline)), upper_half(s.alert)
    phrase = f"{s.kind} {med_b:.4g} → {high:.4g} (upper half), robust z {z:.1f}"
    if z < Z_FLOOR:
        return 0.0, phrase
    if s.kind == "errors":
        d = max(0.0, high - med_b)
        return d / (d + ERROR_HALF), phrase
    if med_b <= 0 or high <= 0:
        return 0.0, phrase
    x = max(0.0, math.log2(high / med_b) - LATENCY_DOUBLINGS)
    return x / (1.0 + x), phrase


def latency_doubled(s: ProbeSeries) -> bool:
    """Latency rose by more than LATENCY_DOUBLINGS doublings (see there); a move smaller
    than that is the percentile's own wander, however small the baseline's spread was."""
    med_b, high = float(np.median(s.baseline)), upper_half(s.alert)
    return med_b > 0 and high > 0 and math.log2(high / med_b) > LATENCY_DOUBLINGS


def _edge_change(series: list[ProbeSeries]) -> tuple[float, str] | None:
    """The strongest move among an edge's latency/error series (None: no such series)."""
    found = [edge_strength(s) for s in series if s.kind in ("latency", "errors")]
    return max(found, key=lambda t: t[0]) if found else None


def _edge_level(e: EdgeFact, out_err: float, lat_ref: float) -> float:
    """Without a baseline: the edge's error rate beyond what the callee gets from its own
    callees, and (weakly) its p95 relative to the largest p95 in the neighbourhood."""
    excl_err = max(0.0, _f(e.error_rate) - out_err)
    err_s = excl_err / (excl_err + ERROR_HALF)
    lat_s = _f(e.latency_p95_ms) / lat_ref if lat_ref > 0 else 0.0
    return max(err_s, LATENCY_WEIGHT * lat_s)


def telemetry(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    """Where edge errors and latency *start*: the frontier rule.

    A fault in S shows on the calls into S (latency added by a delayed network, errors
    returned by a bad release) and, propagated, on the calls into every caller of S. So a
    candidate scores the strongest anomaly on its incoming edges minus the strongest on its
    outgoing ones: high where edges into it moved and edges out of it did not. An edge's
    anomaly is the change between the baseline and the alert window of its own series
    (`from:` probes) when they exist; otherwise its absolute levels (a snapshot carries no
    change, so those count less; see `_edge_level`). Stale edges count half.
    """
    nodes = all_nodes(facts)
    series = edge_probes(facts)
    outgoing: dict[str, list[EdgeFact]] = defaultdict(list)
    for e in facts.edges:
        outgoing[e.src].append(e)
    lat_ref = max((_f(e.latency_p95_ms) for e in facts.edges), default=0.0)
    strength: dict[tuple[str, str], float] = {}
    why: dict[tuple[str, str], str] = {}
    for e in facts.edges:
        key = (e.src, e.dst)
        change = _edge_change(series.get(key, []))
        if change is not None:
            v, why[key] = change
        else:
            out_err = max((_f(o.error_rate) for o in outgoing[e.dst]), default=0.0)
            v = _edge_level(e, out_err, lat_ref)
            lat = f", p95 {e.latency_p95_ms:.0f} ms" if e.latency_p95_ms is not None else ""
            why[key] = f"error rate {100 * _f(e.error_rate):.1f}%{lat} (no baseline)"
        strength[key] = max(strength.get(key, 0.0), v * (STALE_FACTOR if e.stale else 1.0))
    into: dict[str, list[tuple[float, EdgeFact]]] = defaultdict(list)
    for e in facts.edges:
        into[e.dst].append((strength[(e.src, e.dst)], e))
    scores: dict[str, float] = {}
    evidence: dict[str, tuple[Evidence, ...]] = {}
    for name in nodes:
        out_s = max((strength[(o.src, o.dst)] for o in outgoing[name]), default=0.0)
        best_in, best_edge = max(into[name], key=lambda t: t[0], default=(0.0, None))
        scores[name] = max(0.0, best_in - out_s)
        if best_edge is not None and best_in > 0:
            e = best_edge
            stale = " (Stale: halved)" if e.stale else ""
            summary = (
                f"{e.src}→{e.dst} {why[(e.src, e.dst)]}{stale}; "
                f"strongest edge out of {name}: {out_s:.2f}"
            )
            evidence[name] = (
                Evidence(
                    "telemetry",
                    summary,
                    e.source or "graph",
                    round(scores[name], 4),
                    f"{e.type}:{e.src}->{e.dst}",
                    e.status,
                    e.last_seen,
                ),
            )
    return Signal("telemetry", scores, evidence)


# -- live probes --------------------------------------------------------------------------


def deviations(baseline: tuple[float, ...], alert: tuple[float, ...]) -> np.ndarray:
    """Each alert point's distance from the baseline median in robust units (see robust_z)."""
    b = np.asarray(baseline, dtype=float)
    a = np.asarray(alert, dtype=float)
    if b.size == 0 or a.size == 0:
        return np.zeros(0)
    med = float(np.median(b))
    mad = 1.4826 * float(np.median(np.abs(b - med)))
    peak = max(float(np.max(np.abs(a))), float(np.max(np.abs(b))))
    scale = max(mad, 0.05 * abs(med), 0.01 * peak, 1e-9)
    return np.asarray(np.abs(a - med) / scale)


def robust_z(baseline: tuple[float, ...], alert: tuple[float, ...]) -> float:
    """How far the alert window sits from the baseline, in robust units.

    Scale = max(1.4826·MAD, 5% of the baseline median, 1% of the largest magnitude), so a
    flat baseline does not turn jitter into infinity. The statistic is the mean of the
    upper half of the alert window's deviations: one spike does not make an anomaly, a
    fault lasting half the window does.
    """
    dev = np.sort(deviations(baseline, alert))[::-1]
    if dev.size == 0:
        return 0.0
    top = dev[: max(1, math.ceil(dev.size / 2))]
    return float(np.mean(top))


def anomaly(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    """A candidate's own latency, errors and saturation in the alert window against its
    baseline: robust z per series, the strongest kind (weighted by kind) per service.

    Scores are relative within the neighbourhood (sqrt of z over the largest z, so the
    service that moved most scores 1 and one that moved a quarter as much scores 0.5),
    gated by how large the largest move is: when nothing moved, nothing is anomalous.
    Absolute z saturates quickly when baselines come from another day; ratios do not.
    """
    excess: dict[str, float] = {}
    lines: dict[str, list[Evidence]] = {}
    for name in all_nodes(facts):
        best: dict[str, tuple[float, ProbeSeries]] = {}
        for s in facts.probes.get(name, ()):
            z = robust_z(s.baseline, s.alert)
            if s.kind == "latency" and not latency_doubled(s):
                z = 0.0
            if s.kind not in best or z > best[s.kind][0]:
                best[s.kind] = (z, s)
        excess[name] = 0.0
        for kind, (z, s) in sorted(best.items(), key=lambda kv: -kv[1][0]):
            w = KIND_WEIGHT.get(kind, KIND_WEIGHT["other"])
            excess[name] = max(excess[name], w * max(0.0, z - Z_FLOOR))
            if z >= Z_FLOOR and len(lines.setdefault(name, [])) < 3:
                med_b, med_a = float(np.median(s.baseline)), float(np.median(s.alert))
                lines[name].append(
                    Evidence(
                        "anomaly",
                        f"{kind} {s.name}: robust z {z:.1f} (median {med_b:.4g} → {med_a:.4g})",
                        facts.probe_source,
                        round(z, 2),
                        f"{name}/{s.name}",
                    )
                )
    top = max(excess.values(), default=0.0)
    gate = 1.0 - math.exp(-top / Z_SCALE)
    scores = {n: math.sqrt(x / top) * gate if top > 0 else 0.0 for n, x in excess.items()}
    return Signal("anomaly", scores, {k: tuple(v) for k, v in lines.items() if v})


# -- changes ------------------------------------------------------------------------------


ONSET_Z = 3.0
"""A point this many robust units from the baseline median marks where an anomaly starts."""
ONSET_TAU_S = 300.0
"""A defective release shows within minutes of rolling out; later onsets count less."""
NO_EFFECT = 0.25
"""A release whose service shows no anomaly after it: still a suspect, a weak one."""
BEFORE_RELEASE = 0.1
"""The service's anomaly started before the release, so the release did not start it."""


def onset(s: ProbeSeries, window: tuple[float, float]) -> float | None:
    """When an anomalous series first leaves its baseline: the time of the first alert
    point at least ONSET_Z robust units out (without timestamps, the points are taken as
    evenly spaced over the window)."""
    if robust_z(s.baseline, s.alert) < Z_FLOOR:
        return None
    if s.kind == "latency" and not latency_doubled(s):
        return None
    dev = deviations(s.baseline, s.alert)
    hits = np.nonzero(dev >= ONSET_Z)[0]
    if hits.size == 0:
        return None
    if len(s.alert_times) == dev.size:
        return float(s.alert_times[int(hits[0])])
    step = (window[1] - window[0]) / max(1, dev.size)
    return window[0] + float(hits[0]) * step


HEALTH_KINDS = ("errors", "latency")
"""What a release's effect is judged on. A rollout replaces pods, so the released
service's cpu and memory move by construction (fresh pods, warm-up); a defect shows in
what its callers get: errors and latency."""


def onsets(facts: Facts) -> dict[str, tuple[float, str]]:
    """Per service: when its health (HEALTH_KINDS of its own series, and the calls into it
    as its callers see them) starts to move, with the series that moved first."""
    out: dict[str, tuple[float, str]] = {}
    if facts.windows is None:
        return out
    for name, series in facts.probes.items():
        for s in series:
            if s.kind not in HEALTH_KINDS:
                continue
            if s.name.startswith(EDGE_PREFIX) and edge_strength(s)[0] <= 0:
                continue
            t = onset(s, facts.windows.alert)
            if t is not None and (name not in out or t < out[name][0]):
                out[name] = (t, f"{s.kind} {s.name}")
    return out


def change(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    """A Deploy or Change of a candidate, weighed by what its service did after it.

    Age from the alert window's start decays it (half-life ~21 min; later than the
    window's end it cannot be a cause). Where metrics exist, timing decides how much it
    counts: a release just before its own service's anomaly starts is the classic bad
    change (decaying with ONSET_TAU_S of delay); a release whose service shows nothing is
    weak (NO_EFFECT), one after its service already misbehaved did not start it
    (BEFORE_RELEASE). Without probes, presence and age alone count, as before.
    """
    scores: dict[str, float] = {}
    evidence: dict[str, list[Evidence]] = defaultdict(list)
    if facts.windows is None:
        return Signal("change", {})
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
            if seen is None:
                s *= NO_EFFECT
                effect = "; its service's errors/latency did not move"
            elif seen[0] < c.at - step:
                s *= BEFORE_RELEASE
                effect = f"; its service's anomaly ({seen[1]}) started before it"
            else:
                delay = max(0.0, seen[0] - c.at)
                s *= math.exp(-delay / ONSET_TAU_S)
                effect = f"; {seen[1]} of its service moved {delay / 60:.0f} min after it"
        if c.status == "Stale":
            s *= STALE_FACTOR
        scores[c.service] = max(scores.get(c.service, 0.0), s)
        if len(evidence[c.service]) < 3:
            when = (
                "during the alert window"
                if age == 0
                else f"{age / 60:.0f} min before the alert window"
            )
            evidence[c.service].append(
                Evidence(
                    "change",
                    f"{c.kind} {c.ref} at {iso(c.at)} ({when}){effect}",
                    c.source or "graph",
                    round(s, 4),
                    f"{c.kind}:{c.service}:{c.ref}",
                    c.status,
                    c.at,
                )
            )
    return Signal("change", scores, {k: tuple(v) for k, v in evidence.items()})


def _sample_step(facts: Facts) -> float:
    """The probes' sampling step (the alert window over its longest series): onsets are
    known to a step, so a release within one step after an onset is not "before" it."""
    if facts.windows is None:
        return 0.0
    n = max((len(s.alert) for ss in facts.probes.values() for s in ss), default=0)
    a0, a1 = facts.windows.alert
    return (a1 - a0) / n if n else 0.0


# -- history ------------------------------------------------------------------------------


def history(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    """A prior from validated past root causes; incidents on this same anchor count double."""
    scores: dict[str, float] = {}
    evidence: dict[str, tuple[Evidence, ...]] = {}
    for name, h in facts.history.items():
        n = h.incidents + h.on_anchor
        s = (1.0 - math.exp(-n / 2.0)) * (h.confidence if h.confidence is not None else 1.0)
        scores[name] = s
        evidence[name] = (
            Evidence(
                "history",
                f"root cause of {h.incidents} past incident(s), "
                f"{h.on_anchor} of them on {facts.anchor}",
                "Incident",
                round(s, 4),
                f"ROOT_CAUSED_BY:{name}",
                None,
                h.last_seen,
            ),
        )
    return Signal("history", scores, evidence)
