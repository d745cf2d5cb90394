"""The audit: one sub-score per stage, each a deterministic check (no model), and their sum.

    S = sum_k w_k s_k, equal weights: no stage is trusted more than another.

- EP, time-window coverage: 1 when the focus suspect's evidence read the alert window and a
  baseline, 0.5 for the window only, 0 for no window. Read means overlapped the plan's
  alert window (the plan may look up to later than the alert fired, as the API's default
  `api_investigate_at: now` does for an alert delivered late; the tools read up to the
  firing), or, without one, held the plan's moment.
- HS, hypothesis grounding: the share of hypotheses that cite accepted evidence about
  themselves.
- AS, topology feasibility: the share of the path's hops that are edges in the graph the plan
  was ranked on (time travel to the plan's time);
  0 without a path joining the suspect to the symptom.
- DR, calibration: 1 when the stated confidence is the evidence's, falling linearly to 0
  at one line of evidence's weight apart; 0 for a conclusion the evidence does not support.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..evidence import LEADS
from ..sink import EvidenceSink
from .stages import Stages

STAGES = ("EP", "HS", "AS", "DR")
WEIGHTS = {k: 1.0 / len(STAGES) for k in STAGES}
TAU = 1.0 - WEIGHTS["EP"] / 2
"""Pass: at most one stage half-sound (e.g. evidence that read no baseline). Fixed from the
table above before any audit was run on data."""
EPS = WEIGHTS["EP"] / 2
"""Fast path (one local patch) down to one whole stage failing; below it, the slow path."""
DELTA = 0.2 * WEIGHTS["EP"]
"""The least gain in S a patch must bring to be committed: a fifth of one stage."""
CONFIDENCE_GAP = 0.25
"""A stated confidence this far from the evidence's scores 0 on calibration: a quarter of
the scale (the old weight of one line of evidence, fixed before any audit ran)."""

Neighbours = Callable[[str, float | None], set[str]]
"""(name, time) -> the names joined to it by an edge visible at that time. None where no
graph is at hand: the path is then not checked, and the audit says so."""


@dataclass(frozen=True)
class StageScore:
    score: float
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class Audit:
    score: float
    stages: Mapping[str, StageScore]
    route: str
    """pass | fast | slow"""

    @property
    def worst(self) -> str:
        return min(STAGES, key=lambda k: (self.stages[k].score, STAGES.index(k)))

    def as_dict(self) -> dict[str, Any]:
        return {
            "score": round(self.score, 3),
            "route": self.route,
            "stages": {
                k: {"score": round(v.score, 3), "problems": list(v.problems)}
                for k, v in self.stages.items()
            },
        }


def route_of(score: float) -> str:
    if score >= TAU - 1e-9:
        return "pass"
    return "fast" if score >= TAU - EPS - 1e-9 else "slow"


def audit(stages: Stages, sink: EvidenceSink, neighbours: Neighbours | None) -> Audit:
    parts = {
        "EP": coverage(stages),
        "HS": grounding(stages),
        "AS": feasibility(stages, neighbours),
        "DR": calibration(stages, sink),
    }
    score = sum(WEIGHTS[k] * v.score for k, v in parts.items())
    return Audit(score, parts, route_of(score))


def focus(stages: Stages) -> str | None:
    return stages.dr.conclusion or (stages.hs[0].suspect if stages.hs else None)


def coverage(stages: Stages) -> StageScore:
    who = focus(stages)
    if who is None:
        return StageScore(1.0)  # nothing is claimed, so nothing needs a window
    inside = [e for e in stages.ep if e.hypothesis == who and _reads(e.window, stages)]
    if any(e.baseline is not None for e in inside):
        return StageScore(1.0)
    if inside:
        return StageScore(0.5, (f"no evidence on {who} compared the alert window to a baseline",))
    return StageScore(0.0, (f"no evidence on {who} read the alert window",))


def _reads(span: tuple[float, float] | None, stages: Stages) -> bool:
    """Whether evidence over `span` read the alert window (module docstring)."""
    if span is None:
        return False
    if stages.window is not None:
        return span[0] < stages.window[1] and span[1] > stages.window[0]
    return stages.at is None or span[0] <= stages.at <= span[1]


def grounding(stages: Stages) -> StageScore:
    if not stages.hs:
        return StageScore(1.0)
    about = {e.id: e.hypothesis for e in stages.ep}
    problems = []
    for h in stages.hs:
        if not h.cites:
            problems.append(f"{h.suspect} ({h.state}) cites no evidence")
        elif any(about.get(c) != h.suspect for c in h.cites):
            bad = [c for c in h.cites if about.get(c) != h.suspect]
            problems.append(f"{h.suspect} cites evidence not accepted about it: {', '.join(bad)}")
    return StageScore(1.0 - len(problems) / len(stages.hs), tuple(problems))


def feasibility(stages: Stages, neighbours: Neighbours | None) -> StageScore:
    who = focus(stages)
    if who is None:
        return StageScore(1.0)
    if neighbours is None:
        return StageScore(1.0, ("path not checked: no graph at hand",))
    hops = stages.as_.hops
    if not hops or hops[0] != who or hops[-1] != stages.symptom:
        return StageScore(0.0, (f"no path claimed from {who} to {stages.symptom}",))
    pairs = list(itertools.pairwise(hops))
    if not pairs:
        return StageScore(1.0)
    missing = [f"{a} - {b}" for a, b in pairs if not joined(neighbours, a, b, stages.at)]
    problems = tuple(f"no edge {m} in the graph the plan was ranked on" for m in missing)
    return StageScore(1.0 - len(missing) / len(pairs), problems)


def calibration(stages: Stages, sink: EvidenceSink) -> StageScore:
    who = stages.dr.conclusion
    if who is None:
        return StageScore(1.0)
    hyp = sink.hypotheses.get(who)
    if hyp is None or hyp.state not in LEADS:
        return StageScore(0.0, (f"concluded {who}, which the evidence does not support",))
    gap = abs(stages.dr.confidence - hyp.confidence)
    score = max(0.0, 1.0 - gap / CONFIDENCE_GAP)
    if score < 1.0:
        stated = f"stated confidence {stages.dr.confidence:.2f}"
        return StageScore(score, (f"{stated}, the evidence gives {hyp.confidence:.2f}",))
    return StageScore(1.0)


def joined(neighbours: Neighbours, a: str, b: str, at: float | None) -> bool:
    """An edge either way: a datastore has no service edges of its own to list."""
    return b in neighbours(a, at) or a in neighbours(b, at)
