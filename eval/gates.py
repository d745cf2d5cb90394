"""The dual gate (after OpsHarness): a proposal becomes knowledge only when, on a sandbox
copy, it is

- **inner**: at least as accurate on the incidents it was mined from, replayed as they were,
  at a cost within COST_BAND, and strictly better on one of the two; and
- **outer**: no less accurate on a testbed of the platform's other labelled incidents,
  drawn stratified by family and time (`stratified_testbed`), and on any replay datasets the caller
  adds (`datasets`).

`replay(knowledge, incidents)` is the caller's: each incident re-investigated with that
knowledge (the read path's plan, the agent's floor), scored against its label. The live
knowledge is only read: the candidate is a new value (`memory.knowledge.apply`), and
nothing is written unless both gates pass (`Verdict.promoted`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stackgraph.memory.knowledge import Knowledge, Proposal, Trajectory, apply

__all__ = ["COST_BAND", "GateResult", "Score", "Verdict", "judge", "stratified_testbed"]

COST_BAND = 0.10
"""Cost (tool calls and reads, counted, not timed) may rise by a tenth for accuracy; a
fall of more than a tenth is "strictly better" on its own."""


@dataclass(frozen=True)
class Score:
    correct: bool
    cost: float


Replay = Callable[[Knowledge, Sequence[str]], Mapping[str, Score]]
Datasets = Callable[[Knowledge], Mapping[str, float]]
"""knowledge -> AC@1 per replay dataset."""


@dataclass(frozen=True)
class GateResult:
    gate: str
    passed: bool
    why: str
    cases: int
    before: Mapping[str, float]
    after: Mapping[str, float]

    def as_dict(self) -> dict[str, Any]:
        return {"gate": self.gate, "passed": self.passed, "why": self.why, "cases": self.cases,
                "before": dict(self.before), "after": dict(self.after)}  # fmt: skip


def _summary(scores: Mapping[str, Score]) -> dict[str, float]:
    n = max(1, len(scores))
    return {"accuracy": round(sum(s.correct for s in scores.values()) / n, 4),
            "cost": round(sum(s.cost for s in scores.values()) / n, 4)}  # fmt: skip


def inner(
    replay: Replay, live: Knowledge, candidate: Knowledge, sources: Sequence[str]
) -> GateResult:
    b, a = _summary(replay(live, sources)), _summary(replay(candidate, sources))
    if a["accuracy"] < b["accuracy"]:
        why = "less accurate on its own incidents"
    elif a["cost"] > b["cost"] * (1 + COST_BAND):
        why = f"costs more than {COST_BAND:.0%} over"
    elif a["accuracy"] == b["accuracy"] and a["cost"] >= b["cost"] * (1 - COST_BAND):
        why = "no better on its own incidents (neither more accurate nor cheaper)"
    else:
        return GateResult("inner", True, "better on its own incidents", len(sources), b, a)
    return GateResult("inner", False, why, len(sources), b, a)


def outer(
    replay: Replay, live: Knowledge, candidate: Knowledge, bed: Sequence[str],
    datasets: Datasets | None = None,
) -> GateResult:  # fmt: skip
    b, a = _summary(replay(live, bed)), _summary(replay(candidate, bed))
    before = {"testbed": b["accuracy"]}
    after = {"testbed": a["accuracy"]}
    if datasets is not None:
        before |= {f"dataset:{k}": v for k, v in datasets(live).items()}
        after |= {f"dataset:{k}": v for k, v in datasets(candidate).items()}
    fell = [k for k in before if after.get(k, 0.0) < before[k]]
    if fell:
        return GateResult("outer", False, f"accuracy fell on {fell}", len(bed), before, after)
    return GateResult("outer", True, "no accuracy drop on the testbed", len(bed), before, after)


def stratified_testbed(trajectories: Iterable[Trajectory], exclude: Iterable[str], size: int = 40,
            family: Callable[[Trajectory], str] | None = None) -> list[str]:  # fmt: skip
    """Up to `size` labelled incidents outside `exclude`, stratified: each family (by
    default the alert's name) gets its share, spread evenly over time within it."""
    family = family or (lambda t: str(t.alert.get("alertname", "")))
    skip = set(exclude)
    groups: dict[str, list[Trajectory]] = defaultdict(list)
    for t in sorted(trajectories, key=lambda t: t.opened_at):
        if t.label != "pending" and t.fingerprint not in skip:
            groups[family(t)].append(t)
    total = sum(len(g) for g in groups.values())
    out: list[str] = []
    for _, runs in sorted(groups.items()):
        share = max(1, round(size * len(runs) / total)) if total else 0
        step = max(1.0, len(runs) / share) if share else float(len(runs) + 1)
        out += [runs[int(i * step)].fingerprint for i in range(min(share, len(runs)))]
    return out[:size]


@dataclass(frozen=True)
class Verdict:
    proposal: Proposal
    inner: GateResult
    outer: GateResult | None
    promoted: Knowledge | None

    def as_dict(self) -> dict[str, Any]:
        return {"proposal": self.proposal.as_dict(), "inner": self.inner.as_dict(),
                "outer": self.outer.as_dict() if self.outer else None,
                "promoted": self.promoted.version if self.promoted else None}  # fmt: skip


def judge(
    proposal: Proposal, live: Knowledge, replay: Replay, bed: Sequence[str],
    datasets: Datasets | None = None,
) -> Verdict:  # fmt: skip
    """Both gates on a copy; the promoted version (with its gate results) or None."""
    candidate = apply(live, proposal)
    first = inner(replay, live, candidate, proposal.sources)
    if not first.passed:
        return Verdict(proposal, first, None, None)
    second = outer(replay, live, candidate, bed, datasets)
    if not second.passed:
        return Verdict(proposal, first, second, None)
    gates = {"inner": first.as_dict(), "outer": second.as_dict(), "proposal": proposal.as_dict()}
    promoted = Knowledge(candidate.version, candidate.items, candidate.parent, candidate.note,
                         gates)  # fmt: skip
    return Verdict(proposal, first, second, promoted)
