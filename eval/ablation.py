"""What each scorer adds: from one plan, the ranking fused without each voter
(`stackgraph-<scorer>`) and each voter's own ranking (`<scorer> alone`). Each candidate's
breakdown holds every vote and the plan's program names each voter's source and the
priors, so the fusion is re-run on the same votes, not re-investigated."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stackgraph.rca import Plan
from stackgraph.rca.fusion import by_source, rrf
from stackgraph.rca.pipeline import ranked
from stackgraph.rca.scorers import Signal

__all__ = ["ablations"]


def _roles(plan: Plan) -> tuple[Mapping[str, str], list[str]]:
    fusion = dict(plan.program.get("fusion") or {})
    return dict(fusion.get("sources") or {}), list(fusion.get("priors") or [])


def _ranking(plan: Plan, voters: Sequence[str], services: Sequence[str]) -> list[str]:
    sources, priors = _roles(plan)
    signals = {
        v: Signal(v, {c.service: c.signals[v] for c in plan.candidates if v in c.signals},
                  covered=frozenset(plan.coverage[v]) if v in plan.coverage else None)
        for v in voters
    }  # fmt: skip
    names = [c.service for c in plan.candidates]
    fused = by_source(signals, voters, sources, names)
    views = rrf(signals, voters, names)
    prior = [{c.service: c.signals.get(p, 0.0) for c in plan.candidates} for p in priors]
    order = ranked(names, fused, views, prior, plan.anchor)  # the plan's own rule
    return order + sorted(s for s in services if s not in set(names))


def ablations(plan: Plan, services: Sequence[str]) -> dict[str, list[str]]:
    """`stackgraph-<v>` and `<v> alone` for every voter v of the plan's program."""
    voters = list(_roles(plan)[0])
    out: dict[str, list[str]] = {}
    for v in voters:
        out[f"stackgraph-{v}"] = _ranking(plan, [u for u in voters if u != v], services)
        out[f"{v} alone"] = _ranking(plan, [v], services)
    return out
