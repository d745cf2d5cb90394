"""An investigation as four typed stage artifacts (after STAR), the unit the audit scores.

    EP evidence     every accepted tool call, with the windows it read
    HS hypotheses   each suspect that left Candidate, citing the evidence ids it rests on
    AS analysis     the claimed propagation path, root cause first, symptom last
    DR report       conclusion, stated confidence and state, actions

With the deterministic floor, every artifact is derived from the evidence sink, so they
agree by construction and the audit mostly checks what the data allowed (was a baseline
read? does the path exist at the alert time?). A model adds claims of its own: the path
and confidence it states when it concludes. Those are what the audit exists to catch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..alike import Calls, conclusion_state, no_calls, rivals
from ..evidence import HypothesisState, ToolEvidence
from ..sink import EvidenceSink


@dataclass(frozen=True)
class EvidenceItem:
    id: str
    tool: str
    check: str
    hypothesis: str
    verdict: str
    window: tuple[float, float] | None = None
    baseline: tuple[float, float] | None = None


@dataclass(frozen=True)
class HypothesisItem:
    suspect: str
    state: str
    confidence: float
    cites: tuple[str, ...]


@dataclass(frozen=True)
class CausalPath:
    hops: tuple[str, ...]
    """Root cause first, the symptom last; empty when nothing is claimed."""
    claimed_by: str
    """'model' when the model stated it, else 'plan' (the ranked path the suspect came by)."""


@dataclass(frozen=True)
class DiagnosisReport:
    conclusion: str | None
    confidence: float
    """As stated: the model's, when it gave one, else the evidence's."""
    state: str
    actions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Stages:
    ep: tuple[EvidenceItem, ...]
    hs: tuple[HypothesisItem, ...]
    as_: CausalPath
    dr: DiagnosisReport
    symptom: str
    at: float | None = None
    """When the path is walked: the plan's time (None: the graph as it is)."""
    window: tuple[float, float] | None = None
    """The plan's alert window: what the evidence must have read (None: the moment `at`)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "EP": [_item(e) for e in self.ep],
            "HS": [h.__dict__ | {"cites": list(h.cites)} for h in self.hs],
            "AS": {"path": list(self.as_.hops), "claimed_by": self.as_.claimed_by},
            "DR": self.dr.__dict__ | {"actions": list(self.dr.actions)},
        }


def _item(e: EvidenceItem) -> dict[str, Any]:
    out: dict[str, Any] = {k: v for k, v in e.__dict__.items() if v is not None}
    return out | {k: list(v) for k, v in out.items() if isinstance(v, tuple)}


@dataclass
class Claims:
    """What the model stated beyond tool calls; None where it stated nothing."""

    path: tuple[str, ...] | None = None
    confidence: float | None = None

    @classmethod
    def stated(cls, args: Mapping[str, Any]) -> Claims:
        """What a model's conclude call stated (bounded, typed; anything else ignored)."""
        path, conf = args.get("path"), args.get("confidence")
        hops = tuple(str(v)[:253] for v in path[:16]) if isinstance(path, list) and path else None
        if isinstance(conf, bool) or not isinstance(conf, int | float):
            return cls(hops, None)
        return cls(hops, max(0.0, min(1.0, float(conf))))


def evidence_items(sink: EvidenceSink) -> tuple[tuple[EvidenceItem, ...], dict[int, str]]:
    """EP, and the id of each accepted evidence object (by identity)."""
    items, ids = [], {}
    for n, ev in enumerate(sink.all_evidence, start=1):
        ids[id(ev)] = f"e{n}"
        items.append(_ep(f"e{n}", ev))
    return tuple(items), ids


def _ep(ident: str, ev: ToolEvidence) -> EvidenceItem:
    return EvidenceItem(ident, ev.tool, ev.check, ev.hypothesis, str(ev.verdict), ev.window,
                        ev.baseline)  # fmt: skip


def stages_of(
    sink: EvidenceSink,
    conclusion: str | None,
    symptom: str,
    plan_paths: dict[str, Sequence[Sequence[str]]],
    claims: Claims,
    at: float | None,
    actions: Sequence[str] = (),
    window: tuple[float, float] | None = None,
    calls: Calls = no_calls,
) -> Stages:
    """The four artifacts of an investigation as it stands; the report's state is the
    conclusion's (`alike.conclusion_state`), which a rival keeps from Validated."""
    ep, ids = evidence_items(sink)
    hs = []
    for h in sink.ranked():
        if h.state == HypothesisState.CANDIDATE and h.suspect != conclusion:
            continue
        cites = tuple(ids[id(e)] for e in h.evidence)
        hs.append(HypothesisItem(h.suspect, str(h.state), h.confidence, cites))
    focus = conclusion or next((h.suspect for h in sink.ranked()), None)
    hyp = sink.hypotheses.get(focus) if focus else None
    if claims.path is not None:
        path = CausalPath(tuple(claims.path), "model")
    else:
        path = CausalPath(plan_path(focus, symptom, plan_paths), "plan")
    dr = DiagnosisReport(
        conclusion,
        claims.confidence if claims.confidence is not None else (hyp.confidence if hyp else 0.0),
        str(conclusion_state(hyp, rivals(sink, conclusion, calls))) if hyp else "none",
        tuple(actions),
    )
    return Stages(ep, tuple(hs), path, dr, symptom, at, window)


def plan_path(
    suspect: str | None, symptom: str, plan_paths: dict[str, Sequence[Sequence[str]]]
) -> tuple[str, ...]:
    """The plan's shortest path to `suspect`, turned root cause → symptom."""
    if suspect is None:
        return ()
    if suspect == symptom:
        return (symptom,)
    found = sorted(plan_paths.get(suspect, ()), key=len)
    return tuple(reversed(tuple(found[0]))) if found else ()
