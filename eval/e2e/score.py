"""The end-to-end scorecard: what each replayed incident ended as, per arm.

- plan AC@1 / AC@3 (every incident): the API's plan, stored before the agent runs, has the
  root cause first / in its top 3.
- replay plan AC@1 / AC@3 (clean arm): the same graph ranked in process as `stackgraph
  eval` ranks it, for reference: what the API adds or loses on the way.
- conclusion accuracy (every incident): the concluded service is the root cause.
- coverage (every incident): the incident ended `concluded`, not in insufficient
  evidence, a spent budget, or failed.
- conclusion precision (conclusions): the share of conclusions that are right.
- Validated precision (conclusions marked Validated): the share that are right; None when
  there are none.
- calibration, ECE (conclusions): expected calibration error of the stated confidence
  against being right, over 10 equal-width bins of [0, 1]: the sum over bins of
  (bin size / n) * |mean confidence - accuracy|. The stated confidence is calibrated by the
  feedback on earlier incidents when the run gives feedback (`rca.agent.calibration`);
  `calibration_ece_evidence` is the same measure on the evidence's own confidence, what a
  platform without feedback states. `calibration_ece_if_calibrated`: what ECE the same
  conclusions would show if each stated confidence were exactly right (its mean, 95th
  percentile, and the share of such draws at or above the measured one): ECE over a few
  dozen conclusions is far from zero even then.
- s / incident (every incident): from the POST to the incident's end, as polling sees it.
- tool calls / incident (every incident): tool results recorded as evidence (one per
  call of a tool on a suspect).
- distractor concluded (distractor arm): the concluded service is the distractor's; beside
  it, how often the distractor was in the plan's top 3 (the floor checks those) and how
  often a tool's check supported it.
- intervals: the 95% Wilson interval of each share a target or a reader compares
  (`eval.intervals`): with 24 to 56 incidents, one incident is two to four points.

Rankings follow `stackgraph eval`: services the plan left out are appended by name, so
plan AC@k here and there count alike.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..alerting import AlertTime
from ..intervals import wilson
from ..scorecard import rank_of

__all__ = ["TARGETS", "Outcome", "arm_metrics", "ece", "ece_if_calibrated", "scorecard"]

BINS = 10
TARGETS: Mapping[str, tuple[str, float]] = {
    "validated_precision": (">=", 0.95),
    "distractor_concluded": ("<=", 0.02),
    "calibration_ece": ("<=", 0.10),
    "seconds_per_incident": ("<=", 10.0),
}
"""Issue 12's targets for the deterministic floor (seconds: without an LLM)."""


@dataclass
class Outcome:
    """One replayed incident: what the API ended it as, and what the replay knew."""

    case_id: str
    fault_type: str
    root_cause: str
    arm: str
    alert: AlertTime
    plan_ranking: list[str]
    state: str
    ending: str | None
    conclusion: str | None
    conclusion_state: str | None
    confidence: float | None
    """The conclusion's confidence as the incident states it (calibrated by feedback)."""
    tool_calls: int
    seconds: float
    floor: bool
    """The incident's events say the deterministic tool floor ran (no model, or it was down)."""
    evidence_confidence: float | None = None
    """The evidence's own confidence in the conclusion (the hypothesis')."""
    calibrated_on: int = 0
    """Earlier conclusions with feedback on the same evidence that calibrated it."""
    plan_window: tuple[float, float] | None = None
    """The API plan's alert window (its end is the moment the plan looked up to)."""
    conclusion_tools: list[str] = field(default_factory=list)
    """The tools whose checks supported the concluded hypothesis."""
    conclusion_evidence: dict[str, str] = field(default_factory=dict)
    """`tool:check` → verdict and what the tool said, for each check that judged the
    concluded hypothesis: what a conclusion, right or wrong, rested on."""
    root_cause_state: str | None = None
    root_cause_evidence: dict[str, str] = field(default_factory=dict)
    """`tool:check` → verdict and what the tool said, on the true root cause's hypothesis
    (read for diagnosis and scoring only: why the agent's tools refuted, or could not
    judge, what the plan got right)."""
    hypotheses: list[tuple[str, str, float]] = field(default_factory=list)
    """Every hypothesis the investigation held: (suspect, state, the evidence's confidence),
    best first, as the agent ranked them (the rivals a conclusion was chosen among)."""
    replay_ranking: list[str] | None = None
    distractor: str | None = None
    distractor_state: str | None = None
    distractor_healthy: bool | None = None
    """The distractor's series stayed in band (False: every candidate moved; least moved)."""
    notes: list[str] = field(default_factory=list)

    @property
    def right(self) -> bool:
        return self.conclusion is not None and self.conclusion == self.root_cause

    def as_dict(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "fault_type": self.fault_type,
            "root_cause": self.root_cause,
            "arm": self.arm,
            "alert": {
                "how": self.alert.how,
                "signal": self.alert.signal,
                "fired_at": self.alert.fired_at,
            },
            "plan_rank": rank_of(self.plan_ranking, self.root_cause),
            "replay_plan_rank": None
            if self.replay_ranking is None
            else rank_of(self.replay_ranking, self.root_cause),
            "plan_top3": self.plan_ranking[:3],
            "plan_window": self.plan_window,
            "state": self.state,
            "ending": self.ending,
            "conclusion": self.conclusion,
            "conclusion_state": self.conclusion_state,
            "confidence": self.confidence,
            "evidence_confidence": self.evidence_confidence,
            "calibrated_on": self.calibrated_on,
            "conclusion_tools": self.conclusion_tools,
            "conclusion_evidence": self.conclusion_evidence,
            "root_cause_state": self.root_cause_state,
            "root_cause_evidence": self.root_cause_evidence,
            "hypotheses": [list(h) for h in self.hypotheses],
            "right": self.right,
            "tool_calls": self.tool_calls,
            "seconds": round(self.seconds, 3),
            "floor": self.floor,
            "distractor": self.distractor,
            "distractor_state": self.distractor_state,
            "distractor_healthy": self.distractor_healthy,
            "distractor_plan_rank": None
            if self.distractor is None
            else rank_of(self.plan_ranking, self.distractor),
            "notes": self.notes,
        }


def ece(pairs: Sequence[tuple[float, bool]], bins: int = BINS) -> float | None:
    """Expected calibration error of (stated confidence, right) pairs over `bins`
    equal-width bins of [0, 1] (a confidence of 1 falls in the last); None without pairs."""
    if not pairs:
        return None
    filled: dict[int, list[tuple[float, bool]]] = {}
    for conf, ok in pairs:
        c = min(1.0, max(0.0, float(conf)))
        filled.setdefault(min(bins - 1, math.floor(c * bins)), []).append((c, ok))
    n = len(pairs)
    err = 0.0
    for members in filled.values():
        mean_conf = sum(c for c, _ in members) / len(members)
        accuracy = sum(1 for _, ok in members if ok) / len(members)
        err += len(members) / n * abs(mean_conf - accuracy)
    return round(err, 4)


NULL_DRAWS = 2000
"""Draws of the consistency resampling: a p-value to about one point in a hundred."""


def ece_if_calibrated(
    confidences: Sequence[float], measured: float | None, draws: int = NULL_DRAWS
) -> dict[str, float] | None:
    """The ECE these conclusions would show if every stated confidence were exactly right:
    each conclusion drawn right with the probability it states, `draws` times (consistency
    resampling, Bröcker and Smith 2007). Its mean and 95th percentile, and `p`, the share of
    draws at or above `measured`: with twenty conclusions in ten bins, calibrated
    confidence alone shows an ECE near 0.15, so a measured ECE is read against this, not
    against zero. Seeded: the same conclusions give the same figures."""
    if not confidences or measured is None:
        return None
    conf = np.clip(np.asarray(confidences, dtype=float), 0.0, 1.0)
    draws_right = np.random.default_rng(0).random((draws, conf.size)) < conf
    null = np.array(
        [ece(list(zip(conf.tolist(), row.tolist(), strict=True))) or 0.0 for row in draws_right]
    )
    return {"mean": round(float(null.mean()), 4),
            "p95": round(float(np.percentile(null, 95)), 4),
            "p": round(float(np.mean(null >= measured)), 4)}  # fmt: skip


def _share(k: int, n: int) -> float | None:
    return round(k / n, 4) if n else None


def arm_metrics(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The measures of the module docstring over one arm's incidents."""
    n = len(outcomes)
    concluded = [o for o in outcomes if o.ending == "concluded" and o.conclusion]
    validated = [o for o in concluded if o.conclusion_state == "Validated"]
    replayed = [o for o in outcomes if o.replay_ranking is not None]

    def ac(k: int, rankings: Sequence[tuple[Sequence[str], str]]) -> float | None:
        hits = sum(1 for r, truth in rankings if 0 < rank_of(r, truth) <= k)
        return _share(hits, len(rankings))

    plans = [(o.plan_ranking, o.root_cause) for o in outcomes]
    replays = [(o.replay_ranking or [], o.root_cause) for o in replayed]
    with_distractor = [o for o in outcomes if o.distractor is not None]
    seconds = [o.seconds for o in outcomes]
    right = sum(1 for o in concluded if o.right)
    validated_right = sum(1 for o in validated if o.right)
    distracted = sum(1 for o in with_distractor if o.conclusion == o.distractor)
    first = sum(1 for r, truth in plans if rank_of(r, truth) == 1)
    stated_ece = ece([(o.confidence or 0.0, o.right) for o in concluded])
    return {
        "cases": n,
        "plan_ac1": ac(1, plans),
        "plan_ac3": ac(3, plans),
        "replay_plan_ac1": ac(1, replays),
        "replay_plan_ac3": ac(3, replays),
        "conclusion_accuracy": _share(right, n),
        "coverage": _share(len(concluded), n),
        "conclusions": len(concluded),
        "conclusion_precision": _share(right, len(concluded)),
        "validated": len(validated),
        "validated_precision": _share(validated_right, len(validated)),
        "calibration_ece": stated_ece,
        "calibration_ece_if_calibrated": ece_if_calibrated(
            [o.confidence or 0.0 for o in concluded], stated_ece
        ),
        "calibration_ece_evidence": ece(
            [(o.evidence_confidence or 0.0, o.right) for o in concluded]
        ),
        "seconds_per_incident": round(statistics.fmean(seconds), 3) if seconds else None,
        "seconds_max": round(max(seconds), 3) if seconds else None,
        "tool_calls_per_incident": round(statistics.fmean(o.tool_calls for o in outcomes), 2)
        if outcomes
        else None,
        "endings": dict(Counter(o.ending or o.state for o in outcomes)),
        "floor_incidents": sum(1 for o in outcomes if o.floor),
        "distractor_cases": len(with_distractor),
        "distractor_concluded": _share(distracted, len(with_distractor)),
        "distractor_healthy": sum(1 for o in with_distractor if o.distractor_healthy),
        "distractor_in_plan_top3": _share(
            sum(1 for o in with_distractor if o.distractor in o.plan_ranking[:3]),
            len(with_distractor),
        ),
        "distractor_supported": _share(
            sum(1 for o in with_distractor if o.distractor_state in ("Supported", "Validated")),
            len(with_distractor),
        ),
        "intervals": {
            "plan_ac1": wilson(first, n),
            "conclusion_accuracy": wilson(right, n),
            "coverage": wilson(len(concluded), n),
            "validated_precision": wilson(validated_right, len(validated)),
            "distractor_concluded": wilson(distracted, len(with_distractor)),
        },
    }


def _met(metrics: Mapping[str, Any], llm: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, (op, bound) in TARGETS.items():
        value = metrics.get(name)
        if name == "seconds_per_incident" and llm:
            out[name] = {"target": f"{op} {bound:g} (no LLM)", "value": value, "met": None}
            continue
        met = None if value is None else (value >= bound if op == ">=" else value <= bound)
        out[name] = {"target": f"{op} {bound:g}", "value": value, "met": met}
    return out


def scorecard(
    dataset: str,
    outcomes: Sequence[Outcome],
    *,
    mode: str,
    llm: bool,
    skipped: Sequence[Mapping[str, str]] = (),
    cost: Mapping[str, Any] | None = None,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """The JSON scorecard: per arm, the measures; the targets read on the arm they concern
    (distractor concluded on the distractor arm, the rest on the clean arm)."""
    arms = list(dict.fromkeys(o.arm for o in outcomes))
    per_arm = {a: arm_metrics([o for o in outcomes if o.arm == a]) for a in arms}
    targets: dict[str, Any] = {}
    if "clean" in per_arm:
        targets |= _met(per_arm["clean"], llm)
    if "distractor" in per_arm:
        targets["distractor_concluded"] = _met(per_arm["distractor"], llm)["distractor_concluded"]
    else:
        targets.pop("distractor_concluded", None)
    return {
        "dataset": dataset,
        "mode": mode,
        "n_cases": len({o.case_id for o in outcomes}),
        "arms": per_arm,
        "targets": targets,
        "cost": dict(cost or {}),
        "notes": list(notes),
        "skipped": list(skipped),
        "incidents": [o.as_dict() for o in outcomes],
    }
