"""Routing and repair (after STAR): patch the earliest stage whose repair pays, never more.

    S >= TAU              pass: nothing changes
    TAU - EPS <= S < TAU  fast path: one patch on the worst stage
    S < TAU - EPS         slow path: for each stage in order, try its patches on a copy,
                          replay the stages after it, commit the earliest stage whose best
                          patch raises S by DELTA, and re-run what follows it
    no feasible path      (AS scores 0) a return to EP first: more evidence before a path

Patches come from deterministic operators, each one tool call or one re-derivation, so a
repair is itself evidence the sink judges: a patch can make a conclusion stronger only by
tool verdicts. Remembered repairs (`RepairHint`s for the same alert signature) are tried
first.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..alike import Calls, no_calls
from ..evidence import DATA_SOURCE, LEADS, NOT_A_LINE, READS, WITH_BASELINE, source_of
from ..sink import EvidenceSink
from ..toolbox import WIDEN, ToolContext
from .checks import DELTA, STAGES, Audit, Neighbours, audit, joined, route_of
from .stages import Claims, Stages, stages_of

K = 3
"""Patch candidates tried per stage on the slow path."""
MAX_HOPS = 4


@dataclass
class Work:
    """An investigation as the repair sees it: what stages are derived from."""

    sink: EvidenceSink
    conclusion: str | None
    claims: Claims
    symptom: str
    plan_paths: dict[str, Sequence[Sequence[str]]]
    ctx: ToolContext
    at: float | None = None
    """When the path is walked: the time of the graph the plan was ranked on."""
    window: tuple[float, float] | None = None
    """The plan's alert window, which the evidence must have read."""
    checked: list[str] = field(default_factory=list)
    """suspects the hypothesis patch has already brought in."""
    calls: Calls = no_calls
    """The services each one calls: what tells a conclusion's rivals (`alike`)."""

    def stages(self) -> Stages:
        return stages_of(self.sink, self.conclusion, self.symptom, self.plan_paths,
                         self.claims, self.at, window=self.window, calls=self.calls)  # fmt: skip


RunCheck = Callable[[str, dict[str, Any], ToolContext, EvidenceSink], bool]
"""Run tool `name` with args against the sink; False when the tool is not available."""
Conclude = Callable[[EvidenceSink], str | None]


@dataclass(frozen=True)
class Patch:
    stage: str
    name: str
    apply: Callable[[Work], bool]
    """Change the work in place; False when the patch has nothing to do."""


@dataclass(frozen=True)
class Repair:
    stage: str
    patch: str
    before: float
    after: float

    def as_dict(self) -> dict[str, Any]:
        gain = round(self.after - self.before, 3)
        return {"stage": self.stage, "patch": self.patch, "before": round(self.before, 3),
                "after": round(self.after, 3), "gain": gain}  # fmt: skip


@dataclass(frozen=True)
class RepairHint:
    """A remembered repair: this patch on this stage paid before on this alert signature."""

    stage: str
    patch: str
    gain: float


@dataclass
class Outcome:
    work: Work
    first: Audit
    final: Audit
    repairs: list[Repair]
    critic: list[str] = field(default_factory=list)
    """The patches a model's stage critic picked to try first ("STAGE patch")."""

    def as_dict(self) -> dict[str, Any]:
        return {**self.final.as_dict(), "route": self.first.route,
                "first": self.first.as_dict(), "repairs": [r.as_dict() for r in self.repairs],
                "critic": self.critic,
                "artifacts": self.work.stages().as_dict()}  # fmt: skip


def patches(stage: str, run_check: RunCheck, conclude: Conclude, neighbours: Neighbours | None,
            next_suspects: Callable[[Work], list[str]]) -> list[Patch]:  # fmt: skip
    """The deterministic operators of one stage, in their default order."""

    def focus(w: Work) -> str | None:
        return w.conclusion or next((h.suspect for h in w.sink.ranked()), None)

    def run_on(w: Work, who: str, names: Sequence[str], ctx: ToolContext | None = None) -> bool:
        ran = False
        for name in names:
            for args in _args(name, who):
                ran = run_check(name, args, ctx or w.ctx, w.sink) or ran
        return ran

    def read_tools(w: Work, who: str) -> set[str]:
        return (
            {e.tool for e in w.sink.hypotheses[who].evidence} if who in w.sink.hypotheses else set()
        )

    def add_baseline(w: Work) -> bool:
        who = focus(w)
        if who is None:
            return False
        todo = [t for t, r in READS.items() if r == WITH_BASELINE and t not in read_tools(w, who)]
        return run_on(w, who, todo)

    def other_modality(w: Work) -> bool:
        who = focus(w)
        if who is None:
            return False
        have = {source_of(t) for t in read_tools(w, who)}
        todo = [t for t, src in DATA_SOURCE.items() if src not in have | NOT_A_LINE]
        return run_on(w, who, todo)

    def widen_window(w: Work) -> bool:
        who = focus(w)
        if who is None:
            return False
        wide = replace(w.ctx, window_s=w.ctx.window_s * WIDEN)
        return run_on(w, who, [t for t in READS if t in read_tools(w, who)], wide)

    def next_candidates(w: Work) -> bool:
        ran = False
        for who in next_suspects(w)[:2]:
            w.checked.append(who)
            ran = run_on(w, who, ["prometheus_query", "loki_query", "git_log"]) or ran
        if ran:
            w.conclusion = _reconclude(w, conclude)
        return ran

    def rebuild_path(w: Work) -> bool:
        who = focus(w)
        if who is None or neighbours is None:
            return False
        path = feasible_path(who, w.symptom, w.plan_paths, neighbours, w.at)
        if path is None or path == w.claims.path:
            return False
        w.claims.path = path
        return True

    def recompute_confidence(w: Work) -> bool:
        changed = w.claims.confidence is not None
        w.claims.confidence = None
        again = _reconclude(w, conclude)
        changed = changed or again != w.conclusion
        w.conclusion = again
        return changed

    table = {
        "EP": [Patch("EP", "add-baseline", add_baseline),
               Patch("EP", "other-modality", other_modality),
               Patch("EP", "widen-window", widen_window)],
        "HS": [Patch("HS", "next-candidates", next_candidates)],
        "AS": [Patch("AS", "rebuild-path", rebuild_path)],
        "DR": [Patch("DR", "recompute-confidence", recompute_confidence)],
    }  # fmt: skip
    return table[stage]


def _args(name: str, who: str) -> list[dict[str, Any]]:
    if name == "prometheus_query":
        return [{"service": who, "signal": s} for s in ("error_rate", "latency_p95")]
    if name == "loki_query":
        return [{"service": who, "contains": "error"}]
    if name in {"git_show", "memory_lookup"}:
        return []
    return [{"service": who}]


def _reconclude(w: Work, conclude: Conclude) -> str | None:
    """Keep the conclusion while the evidence still supports it; else what the floor says."""
    hyp = w.sink.hypotheses.get(w.conclusion) if w.conclusion else None
    if hyp is not None and hyp.state in LEADS:
        return w.conclusion
    return conclude(w.sink)


def feasible_path(
    who: str, symptom: str, plan_paths: dict[str, Sequence[Sequence[str]]],
    neighbours: Neighbours, at: float | None,
) -> tuple[str, ...] | None:  # fmt: skip
    """A path root cause → symptom whose every hop exists at `at`: the plan's own paths
    first (shortest first), else a breadth-first walk of at most MAX_HOPS."""
    if who == symptom:
        return (symptom,)
    for p in sorted(plan_paths.get(who, ()), key=len):
        hops = tuple(reversed(tuple(p)))
        if (
            hops[0] == who
            and hops[-1] == symptom
            and all(joined(neighbours, a, b, at) for a, b in itertools.pairwise(hops))
        ):
            return hops
    frontier: list[tuple[str, ...]] = [(who,)]
    seen = {who}
    for _ in range(MAX_HOPS):
        nxt: list[tuple[str, ...]] = []
        for path in frontier:
            for n in sorted(neighbours(path[-1], at)):
                if n == symptom:
                    return (*path, n)
                if n not in seen:
                    seen.add(n)
                    nxt.append((*path, n))
        frontier = nxt
    return None


def repair(
    work: Work, neighbours: Neighbours | None, run_check: RunCheck, conclude: Conclude,
    next_suspects: Callable[[Work], list[str]], hints: Sequence[RepairHint] = (),
    critic: Callable[[Audit, dict[str, list[str]]], list[RepairHint]] | None = None,
) -> Outcome:  # fmt: skip
    """Audit the work and repair it as the route says. Patches are tried remembered ones
    first, then the critic's pick (a model, when one is configured), then in their order."""

    def score(w: Work) -> Audit:
        return audit(w.stages(), w.sink, neighbours)

    def ordered(stage: str) -> list[Patch]:
        mine = patches(stage, run_check, conclude, neighbours, next_suspects)
        rank: dict[str, float] = {}
        for h in hints:
            if h.stage == stage:
                rank[h.patch] = min(rank.get(h.patch, 0.0), -h.gain)
        return sorted(mine, key=lambda p: rank.get(p.name, 0.0))

    def attempt(w: Work, patch: Patch) -> tuple[Work, Audit] | None:
        trial = copy.copy(w)
        trial.sink = copy.deepcopy(w.sink)
        trial.claims = replace(w.claims)
        trial.checked = list(w.checked)
        if not patch.apply(trial):
            return None
        return trial, score(trial)

    first = score(work)
    picked: list[RepairHint] = []
    if critic is not None and first.route != "pass":
        menu = {k: [p.name for p in ordered(k)] for k in STAGES if first.stages[k].score < 1.0}
        picked = critic(first, menu)
        hints = [*hints, *picked]
    current, repairs = first, []
    if first.route == "fast":  # one patch: the worst stage's, or the next worst's if none applies
        order = sorted(STAGES, key=lambda k: (first.stages[k].score, STAGES.index(k)))
        if first.stages["AS"].score == 0.0:  # no feasible chain: back to evidence first
            order.remove("EP")
            order.insert(0, "EP")
        tries = [(k, p) for k in order if first.stages[k].score < 1.0 for p in ordered(k)]
        for stage, patch in tries:
            tried = attempt(work, patch)
            if tried and tried[1].score > current.score:
                work = tried[0]
                repairs.append(Repair(stage, patch.name, current.score, tried[1].score))
                current = tried[1]
                break
    elif first.route == "slow":
        order = list(STAGES)
        for stage in order:
            best: tuple[Work, Audit, Patch] | None = None
            for patch in ordered(stage)[:K]:
                tried = attempt(work, patch)
                if tried and (best is None or tried[1].score > best[1].score):
                    best = (tried[0], tried[1], patch)
            if best and best[1].score - current.score >= DELTA:
                work = best[0]
                repairs.append(Repair(stage, best[2].name, current.score, best[1].score))
                current = best[1]
                if route_of(current.score) == "pass":
                    break
    return Outcome(work, first, current, repairs, [f"{h.stage} {h.patch}" for h in picked])
