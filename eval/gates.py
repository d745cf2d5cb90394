"""The dual gate (after OpsHarness): a proposal becomes knowledge only when, on a sandbox
copy, it is

- **inner**: at least as accurate on the incidents it was mined from, replayed as they were,
  at a cost within COST_BAND, and strictly better on one of the two; and
- **outer**: no less accurate on a testbed of the platform's other labelled incidents,
  drawn stratified by family and time (`stratified_testbed`), and on any replay datasets
  the caller adds (`datasets`); and the outcomes it changes, its own incidents and the
  testbed together, must be more fixes than breaks beyond chance (McNemar's exact test at
  ALPHA): a handful of incidents is too few to learn a rule from. A proposal for which
  "cheaper" is no ground (`cheaper_is_no_ground`) must fix incidents.

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
from stackgraph.rca.agent.evidence import is_a_line

from .intervals import better_p

__all__ = [
    "ALPHA",
    "COST_BAND",
    "GateResult",
    "Score",
    "Verdict",
    "cheaper_is_no_ground",
    "judge",
    "significant",
    "stratified_testbed",
]

COST_BAND = 0.10
"""Cost (tool calls and reads, counted, not timed) may rise by a tenth for accuracy; a
fall of more than a tenth is "strictly better" on its own."""
ALPHA = 0.05
"""The customary level: a change of outcomes is kept only when chance would give it less
than one time in twenty."""


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


def inner(before: Mapping[str, Score], after: Mapping[str, Score]) -> GateResult:
    """On the proposal's own incidents (module docstring)."""
    b, a = _summary(before), _summary(after)
    sources = list(before)
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
    live: Mapping[str, Score], candidate: Mapping[str, Score], changed: tuple[int, int],
    datasets: tuple[Mapping[str, float], Mapping[str, float]] | None = None,
    must_fix: str | None = None,
) -> GateResult:  # fmt: skip
    """On the testbed (and replay datasets): no accuracy drop; and what the candidate
    changes, over its own incidents and the testbed together (`changed`: incidents it
    fixes, incidents it breaks), must be more than chance would give (`significant`). A
    proposal with a `must_fix` reason (`cheaper_is_no_ground`) must fix incidents."""
    b, a = _summary(live), _summary(candidate)
    before = {"testbed": b["accuracy"]}
    after = {"testbed": a["accuracy"]}
    if datasets is not None:
        before |= {f"dataset:{k}": v for k, v in datasets[0].items()}
        after |= {f"dataset:{k}": v for k, v in datasets[1].items()}
    fell = [k for k in before if after.get(k, 0.0) < before[k]]
    n = len(live)
    if fell:
        return GateResult("outer", False, f"accuracy fell on {fell}", n, before, after)
    fixes, breaks = changed
    if must_fix and fixes == 0:
        return GateResult("outer", False, f"{must_fix}: it must fix incidents, not only cost less",
                          n, before, after)  # fmt: skip
    if fixes + breaks and not significant(fixes, breaks):
        why = (f"{fixes} incident(s) fixed against {breaks} broken is within chance "
               f"(one-sided sign test, p >= {ALPHA})")  # fmt: skip
        return GateResult("outer", False, why, n, before, after)
    return GateResult("outer", True, "no accuracy drop on the testbed", n, before, after)


def cheaper_is_no_ground(proposal: Proposal) -> str | None:
    """Why a cost saving alone cannot admit this proposal, or None. A program choice ranks
    differently, and where it differs the past is no guide. A `-` rule that skips a tool
    reading an independent line of evidence (metrics, logs, Kubernetes, changes: not the
    graph or memory, which re-read the plan or a prior) leaves the agent one check fewer
    to confirm or refute a lead with: the incidents it was judged on, where that check
    changed nothing, say nothing of those where it would have."""
    item = proposal.item
    if item.kind == "program":
        return "a program choice changes the ranking"
    tool = str(item.data.get("tool") or "")
    skips = item.kind == "rule" and item.polarity == "-" and proposal.op != "delete"
    if skips and tool and is_a_line(tool):
        return f"skipping {tool} drops a line of evidence"
    return None


def significant(fixes: int, breaks: int) -> bool:
    """McNemar's exact test on the paired outcomes: more fixes than breaks, beyond
    chance at ALPHA (one-sided binomial on the discordant pairs)."""
    return fixes > breaks and better_p(fixes, breaks) < ALPHA


def _changed(live: Mapping[str, Score], candidate: Mapping[str, Score]) -> tuple[int, int]:
    fixes = sum(1 for k, s in candidate.items() if s.correct and not live[k].correct)
    breaks = sum(1 for k, s in candidate.items() if not s.correct and live[k].correct)
    return fixes, breaks


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

    @property
    def rejected_by(self) -> GateResult | None:
        """The gate that turned the proposal down (None: both passed)."""
        if not self.inner.passed:
            return self.inner
        return self.outer if self.outer is not None and not self.outer.passed else None

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
    own_before, own_after = replay(live, proposal.sources), replay(candidate, proposal.sources)
    first = inner(own_before, own_after)
    if not first.passed:
        return Verdict(proposal, first, None, None)
    bed_before, bed_after = replay(live, bed), replay(candidate, bed)
    own, other = _changed(own_before, own_after), _changed(bed_before, bed_after)
    sets = (datasets(live), datasets(candidate)) if datasets is not None else None
    second = outer(bed_before, bed_after, (own[0] + other[0], own[1] + other[1]), sets,
                   cheaper_is_no_ground(proposal))  # fmt: skip
    if not second.passed:
        return Verdict(proposal, first, second, None)
    gates = {"inner": first.as_dict(), "outer": second.as_dict(), "proposal": proposal.as_dict()}
    promoted = Knowledge(candidate.version, candidate.items, candidate.parent, candidate.note,
                         gates)  # fmt: skip
    return Verdict(proposal, first, second, promoted)
