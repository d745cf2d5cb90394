"""What each scorer adds: from one plan, the ranking fused without each voter
(`stackgraph-<scorer>`) and each voter's own ranking (`<scorer> alone`). Each candidate's
breakdown holds every vote, so the fusion is re-run on the same votes, not re-investigated."""

from __future__ import annotations

from collections.abc import Sequence

from stackgraph.rca import DEFAULT, Plan, Playbook
from stackgraph.rca.fusion import by_source, rrf
from stackgraph.rca.pipeline import ranked
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
    priors = [{c.service: c.signals.get(p, 0.0) for c in plan.candidates} for p in playbook.priors]
    order = ranked(names, fused, views, priors)  # the plan's own rule, outside services after
    return order + sorted(s for s in services if s not in set(names))


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
