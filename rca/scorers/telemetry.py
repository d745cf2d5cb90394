"""Telemetry on call edges: where errors and latency *start* (the frontier rule).

A fault in S shows on the calls into S (latency added by a delayed network, errors returned
by a bad release) and, propagated, on the calls into every caller of S. A candidate scores
the strongest move on its incoming edges minus the strongest on its outgoing ones: high
where edges into it moved and edges out of it did not. An edge's move is its own series'
verdict (`rca.series.assess`: `from:` probes). A snapshot of levels carries no change, so
it is no evidence of a fault where a metrics source could have shown one: an edge without
series then says nothing. Only when nothing was probed at all (no metrics source) do the
levels stand in (`edge_level`: errors only; an edge whose failures nobody recorded judges
nothing, and with none recorded the scorer abstains). Stale edges count half. A judged
candidate keeps its edge as evidence even at 0, so the agent can refute it on that edge.

Where the calls into a service and the calls it makes both got slower, the relative moves
alone cannot say which part is its own: a caller stalled for a second while its callee
took 13 ms longer moved 0.69 against the callee's 0.52. Latency adds up along a call, so
the time the caller's callers wait longer is compared with the time the caller waits
longer on its own calls, in seconds, as STRIX's self-time compares a span with its
slowest callee (`own_part`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

import numpy as np

from ..facts import EdgeFact, Facts, ProbeSeries
from ..model import EDGE_PREFIX, Evidence
from ..series import ERROR_HALF, assess, upper_half
from .signal import STALE_FACTOR, Signal, all_nodes, votes


def edge_probes(facts: Facts) -> dict[tuple[str, str], list[ProbeSeries]]:
    """The per-edge series among the probes, keyed (caller, callee)."""
    out: dict[tuple[str, str], list[ProbeSeries]] = defaultdict(list)
    for callee, series in facts.probes.items():
        for s in series:
            if s.name.startswith(EDGE_PREFIX):
                out[(s.name[len(EDGE_PREFIX) :], callee)].append(s)
    return out


CALL_KINDS = ("latency", "errors")
"""What a slow or failing callee passes up to its callers: the kinds an edge moves by."""


@dataclass(frozen=True)
class EdgeMove:
    """How far an edge's series left their band, and the seconds its caller waits longer."""

    effect: float
    phrase: str = ""
    latency: float = 0.0
    """The effect of its latency series alone (0: in band, or none)."""
    added_s: float | None = None
    """The moved latency's level in the window (its upper half, as `assess` reads it) less
    the baseline's median, in the series' unit (None: not moved)."""


def _edge_move(series: list[ProbeSeries], window: tuple[float, float] | None) -> EdgeMove | None:
    """The strongest move among an edge's latency/error series (None: no such series)."""
    found = [(s, assess(s, window)) for s in series if s.kind in CALL_KINDS]
    if not found:
        return None
    best = max(found, key=lambda t: t[1].effect)[1]
    slow = [(s, t) for s, t in found if s.kind == "latency" and t.out]
    if not slow:
        return EdgeMove(best.effect, best.phrase)
    s, t = max(slow, key=lambda st: st[1].effect)
    added = upper_half(s.alert) - float(np.median(s.baseline))
    return EdgeMove(best.effect, best.phrase, t.effect, added)


def own_part(into: EdgeMove, out: Iterable[EdgeMove]) -> float:
    """The part of the move into a service its own calls do not explain: the move into it
    less the strongest move out; and, where the calls into it got slower, their latency's
    move times the share of the added seconds that no call it makes added
    (1 - slowest callee's added seconds / its callers' added seconds), when that is more."""
    outs = list(out)
    part = max(0.0, into.effect - max((o.effect for o in outs), default=0.0))
    if into.added_s is not None and into.added_s > 0:
        part = max(part, into.latency * max(0.0, 1.0 - slowest_added(outs) / into.added_s))
    return part


def slowest_added(outs: Iterable[EdgeMove]) -> float:
    """The most seconds any of a service's calls out added (0: none got slower)."""
    return max((o.added_s or 0.0 for o in outs), default=0.0)


def edge_moves(facts: Facts) -> dict[tuple[str, str], EdgeMove]:
    """How far each edge's own series moved out of their band (effect 0: in band); edges
    without series are left out."""
    window = facts.windows.alert if facts.windows else None
    out: dict[tuple[str, str], EdgeMove] = {}
    for key, series in edge_probes(facts).items():
        move = _edge_move(series, window)
        if move is not None:
            out[key] = move
    return out


def edge_level(e: EdgeFact, out_err: float) -> float:
    """Without a baseline: the edge's error rate beyond what the callee gets from its own
    callees. A failing call is abnormal at any level; a p95 without a baseline only says
    where time goes, not that something broke, so latency levels do not count."""
    excl_err = max(0.0, (e.error_rate or 0.0) - out_err)
    return excl_err / (excl_err + ERROR_HALF)


def telemetry(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    """The frontier rule on call edges (module docstring)."""
    if not facts.edges:
        return votes("telemetry", {}, abstained="no call edges around the anchor")
    nodes = all_nodes(facts)
    series = edge_probes(facts)
    window = facts.windows.alert if facts.windows else None
    outgoing: dict[str, list[EdgeFact]] = defaultdict(list)
    for e in facts.edges:
        outgoing[e.src].append(e)
    strength: dict[tuple[str, str], EdgeMove] = {}
    why: dict[tuple[str, str], str] = {}
    probed = any(facts.probes.values())
    if not probed and all(e.error_rate is None for e in facts.edges):
        return votes("telemetry", {}, abstained="no call's failures were recorded, and no "
                     "metrics source to compare with")  # fmt: skip
    for e in facts.edges:
        key = (e.src, e.dst)
        move = _edge_move(series.get(key, []), window)
        if move is not None:
            why[key] = move.phrase
        elif probed:
            move, why[key] = EdgeMove(0.0), "no series of this edge"
        else:
            out_err = max((o.error_rate or 0.0 for o in outgoing[e.dst]), default=0.0)
            move = EdgeMove(edge_level(e, out_err))
            lat = f", p95 {e.latency_p95_ms:.0f} ms" if e.latency_p95_ms is not None else ""
            rate = "none recorded" if e.error_rate is None else f"{100 * e.error_rate:.1f}%"
            why[key] = f"error rate {rate}{lat} (no baseline)"
        if e.stale:
            move = replace(move, effect=move.effect * STALE_FACTOR,
                           latency=move.latency * STALE_FACTOR)  # fmt: skip
        if key not in strength or move.effect > strength[key].effect:
            strength[key] = move
    into: dict[str, list[tuple[float, EdgeFact]]] = defaultdict(list)
    for e in facts.edges:
        into[e.dst].append((strength[(e.src, e.dst)].effect, e))
    judged = {e.dst for e in facts.edges
              if (e.src, e.dst) in series or (not probed and e.error_rate is not None)}  # fmt: skip
    scores: dict[str, float] = {}
    evidence: dict[str, tuple[Evidence, ...]] = {}
    for name in nodes:
        outs = [strength[(o.src, o.dst)] for o in outgoing[name]]
        out_s = max((o.effect for o in outs), default=0.0)
        _, best_edge = max(into[name], key=lambda t: t[0], default=(0.0, None))
        inward = strength[(best_edge.src, best_edge.dst)] if best_edge else EdgeMove(0.0)
        scores[name] = own_part(inward, outs)
        if best_edge is not None and name in judged:
            e = best_edge
            stale = " (Stale: halved)" if e.stale else ""
            summary = (f"{e.src}→{e.dst} {why[(e.src, e.dst)]}{stale}; "
                       f"strongest edge out of {name}: {out_s:.2f}")  # fmt: skip
            below = slowest_added(outs)
            if inward.added_s and below:
                summary += f" (its calls out added {below:.3g} of the {inward.added_s:.3g} added)"
            evidence[name] = (
                Evidence("telemetry", summary, e.source or "graph", round(scores[name], 4),
                         f"{e.type}:{e.src}->{e.dst}", e.status, e.last_seen),
            )  # fmt: skip
    return votes("telemetry", scores, evidence, covered=judged)
