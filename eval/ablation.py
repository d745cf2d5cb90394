"""What each scorer adds: from one plan, the ranking fused without each voter
(`stackgraph-<scorer>`) and each voter's own ranking (`<scorer> alone`). Each candidate's
breakdown holds every vote, so the fusion is re-run on the same votes, not re-investigated."""

from __future__ import annotations

from collections.abc import Sequence

from stackgraph.rca import DEFAULT, Plan, Playbook
from stackgraph.rca.fusion import by_source, rrf
from stackgraph.rca.scorers import Signal

__all__ = ["ablations"]


def _ranking(
    plan: Plan, voters: Sequence[str], services: Sequence[str], playbook: Playbook
) -> list[str]:
    signals = {
        v: Signal(v, {c.service: c.signals[v] for c in plan.candidates if v in c.signals},
                  covered=frozenset(plan.coverage[v]) if v in plan.coverage else None)
        for v in voters
    }  # fmt: skip
    names = [c.service for c in plan.candidates]
    fused = by_source(signals, voters, playbook.sources, names)
    views = rrf(signals, voters, names)
    prior = playbook.priors[0] if playbook.priors else ""
    tie = {c.service: c.signals.get(prior, 0.0) for c in plan.candidates}
    ranked = sorted((s for s in services if s in fused),
                    key=lambda s: (-fused[s], -views.get(s, 0.0), -tie.get(s, 0.0), s))  # fmt: skip
    return ranked + sorted(s for s in services if s not in fused)


def ablations(
    plan: Plan, services: Sequence[str], playbook: Playbook = DEFAULT
) -> dict[str, list[str]]:
    """`stackgraph-<v>` and `<v> alone` for every voter v of the playbook."""
    out: dict[str, list[str]] = {}
    for v in playbook.voters:
        out[f"stackgraph-{v}"] = _ranking(plan, [u for u in playbook.voters if u != v],
                                          services, playbook)  # fmt: skip
        out[f"{v} alone"] = _ranking(plan, [v], services, playbook)
    return out
