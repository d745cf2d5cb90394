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
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from ..facts import EdgeFact, Facts, ProbeSeries
from ..model import EDGE_PREFIX, Evidence
from ..series import ERROR_HALF, assess
from .signal import STALE_FACTOR, Signal, all_nodes, votes


def edge_probes(facts: Facts) -> dict[tuple[str, str], list[ProbeSeries]]:
    """The per-edge series among the probes, keyed (caller, callee)."""
    out: dict[tuple[str, str], list[ProbeSeries]] = defaultdict(list)
    for callee, series in facts.probes.items():
        for s in series:
            if s.name.startswith(EDGE_PREFIX):
                out[(s.name[len(EDGE_PREFIX) :], callee)].append(s)
    return out


def _edge_move(
    series: list[ProbeSeries], window: tuple[float, float] | None
) -> tuple[float, str] | None:
    """The strongest move among an edge's latency/error series (None: no such series)."""
    found = [assess(s, window) for s in series if s.kind in ("latency", "errors")]
    if not found:
        return None
    best = max(found, key=lambda t: t.effect)
    return best.effect, best.phrase


def edge_moves(facts: Facts) -> dict[tuple[str, str], float]:
    """How far each edge's own series moved out of their band (0: in band); edges without
    series are left out."""
    window = facts.windows.alert if facts.windows else None
    out: dict[tuple[str, str], float] = {}
    for key, series in edge_probes(facts).items():
        move = _edge_move(series, window)
        if move is not None:
            out[key] = move[0]
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
    strength: dict[tuple[str, str], float] = {}
    why: dict[tuple[str, str], str] = {}
    probed = any(facts.probes.values())
    if not probed and all(e.error_rate is None for e in facts.edges):
        return votes("telemetry", {}, abstained="no call's failures were recorded, and no "
                     "metrics source to compare with")  # fmt: skip
    for e in facts.edges:
        key = (e.src, e.dst)
        move = _edge_move(series.get(key, []), window)
        if move is not None:
            v, why[key] = move
        elif probed:
            v, why[key] = 0.0, "no series of this edge"
        else:
            out_err = max((o.error_rate or 0.0 for o in outgoing[e.dst]), default=0.0)
            v = edge_level(e, out_err)
            lat = f", p95 {e.latency_p95_ms:.0f} ms" if e.latency_p95_ms is not None else ""
            rate = "none recorded" if e.error_rate is None else f"{100 * e.error_rate:.1f}%"
            why[key] = f"error rate {rate}{lat} (no baseline)"
        strength[key] = max(strength.get(key, 0.0), v * (STALE_FACTOR if e.stale else 1.0))
    into: dict[str, list[tuple[float, EdgeFact]]] = defaultdict(list)
    for e in facts.edges:
        into[e.dst].append((strength[(e.src, e.dst)], e))
    judged = {e.dst for e in facts.edges
              if (e.src, e.dst) in series or (not probed and e.error_rate is not None)}  # fmt: skip
    scores: dict[str, float] = {}
    evidence: dict[str, tuple[Evidence, ...]] = {}
    for name in nodes:
        out_s = max((strength[(o.src, o.dst)] for o in outgoing[name]), default=0.0)
        best_in, best_edge = max(into[name], key=lambda t: t[0], default=(0.0, None))
        scores[name] = max(0.0, best_in - out_s)
        if best_edge is not None and name in judged:
            e = best_edge
            stale = " (Stale: halved)" if e.stale else ""
            summary = (f"{e.src}→{e.dst} {why[(e.src, e.dst)]}{stale}; "
                       f"strongest edge out of {name}: {out_s:.2f}")  # fmt: skip
            evidence[name] = (
                Evidence("telemetry", summary, e.source or "graph", round(scores[name], 4),
                         f"{e.type}:{e.src}->{e.dst}", e.status, e.last_seen),
            )  # fmt: skip
    return votes("telemetry", scores, evidence, covered=judged)
