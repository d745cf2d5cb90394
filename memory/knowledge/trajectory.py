"""Trajectories: every investigation as data, to learn from once feedback labels it.

A trajectory holds the alert (and its signature: the same alert on the same service), the
plan's program and leads, each tool call with the suspect, check, window and verdict, the
stage audit, the conclusion, what it cost, the knowledge items it used, and, once feedback
came, its label and the true root cause:

| label | when |
|---|---|
| correct | feedback confirmed the concluded root cause |
| partial | the confirmed root cause was among the plan's leads (top 3), not concluded |
| wrong | feedback said wrong, or confirmed another root cause outside the leads |
| pending | no feedback yet |

Stored as a `Trajectory` node per incident (`Incident -TRACED_AS-> Trajectory`, the record
as JSON), written through the writer like every outcome, exported by `stackgraph
trajectories export`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from stackgraph.rca.agent.floor import KNOWLEDGE_EVENT
from stackgraph.rca.agent.report import signature
from stackgraph.rca.outcome import SYNTHETIC, IncidentOutcome
from stackgraph.schema import EdgeRecord, NodeRecord, NodeRef, RecordBatch

__all__ = [
    "LABELS",
    "Step",
    "Trajectory",
    "label_of",
    "trajectory_node",
    "trajectory_of",
    "trajectory_records",
]

LABELS = ("correct", "partial", "wrong", "pending")
LEADS = 3
"""The plan's leads: what the agent checks first (its floor's `top_k`)."""


@dataclass(frozen=True)
class Step:
    """One tool call against one suspect."""

    tool: str
    check: str
    suspect: str
    verdict: str
    source: str
    window: tuple[float, float] | None = None


@dataclass(frozen=True)
class Trajectory:
    fingerprint: str
    signature: str
    alert: Mapping[str, str]
    opened_at: float
    fired_at: float | None = None
    """When the alert says it started firing."""
    plan_at: float | None = None
    """Where the plan's alert window ended: a replay plans there again."""
    program: str = ""
    program_digest: str = ""
    leads: tuple[str, ...] = ()
    steps: tuple[Step, ...] = ()
    stages: Mapping[str, Any] = field(default_factory=dict)
    conclusion: str | None = None
    ending: str = ""
    confidence: float | None = None
    state: str = ""
    """The conclusion's state (Validated, Supported; a rival keeps it from Validated:
    `rca.agent.alike`): with `confidence`, the evidence a later conclusion's confidence is
    calibrated on."""
    cost: Mapping[str, float] = field(default_factory=dict)
    knowledge: tuple[str, ...] = ()
    label: str = "pending"
    root_cause: str | None = None
    lead_series: tuple[str, ...] = ()
    """The first lead's series that left their band (`service/kind/name`), strongest
    first: what put it first, for the miner of series that mislead here."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Trajectory:
        steps = tuple(
            Step(str(s["tool"]), str(s.get("check", "")), str(s["suspect"]), str(s["verdict"]),
                 str(s.get("source", "")),
                 tuple(s["window"]) if s.get("window") else None)
            for s in d.get("steps") or ()
        )  # fmt: skip
        return cls(
            fingerprint=str(d["fingerprint"]), signature=str(d["signature"]),
            alert=dict(d.get("alert") or {}), opened_at=float(d.get("opened_at") or 0.0),
            fired_at=d.get("fired_at"), plan_at=d.get("plan_at"),
            program=str(d.get("program") or ""), program_digest=str(d.get("program_digest") or ""),
            leads=tuple(d.get("leads") or ()), steps=steps, stages=dict(d.get("stages") or {}),
            conclusion=d.get("conclusion"), ending=str(d.get("ending") or ""),
            confidence=d.get("confidence"), state=str(d.get("state") or ""),
            cost=dict(d.get("cost") or {}),
            knowledge=tuple(d.get("knowledge") or ()), label=str(d.get("label") or "pending"),
            root_cause=d.get("root_cause"), lead_series=tuple(d.get("lead_series") or ()),
        )  # fmt: skip


def label_of(outcome: IncidentOutcome, leads: Sequence[str]) -> tuple[str, str | None]:
    """(label, true root cause) from the outcome's feedback (module docstring)."""
    concluded = outcome.run.conclusion if outcome.run is not None else None
    if outcome.feedback == "confirmed" and outcome.confirmed_root_cause:
        truth = outcome.confirmed_root_cause
        if truth == concluded:
            return "correct", truth
        return ("partial" if truth in leads else "wrong"), truth
    if outcome.feedback == "wrong":
        return "wrong", None
    return "pending", None


def trajectory_of(outcome: IncidentOutcome) -> Trajectory:
    """The outcome as a trajectory (pure)."""
    plan, run = outcome.plan, outcome.run
    program = dict(plan.program) if plan is not None else {}
    leads = tuple(c.service for c in plan.candidates[:LEADS]) if plan is not None else ()
    steps: list[Step] = []
    used = [str(i) for i in program.get("knowledge") or ()]
    stages: dict[str, Any] = {}
    cost: dict[str, float] = {}
    conclusion, ending, confidence, state = None, "", None, ""
    if run is not None:
        for h in sorted(run.hypotheses, key=lambda h: h.rank):
            for e in h.evidence:
                steps.append(Step(e.tool, e.check, h.suspect, str(e.verdict), e.source,
                                  e.window))  # fmt: skip
        audit = run.audit or {}
        stages = {"score": audit.get("score"), "route": audit.get("route"),
                  "repairs": audit.get("repairs", [])} if audit else {}  # fmt: skip
        conclusion, ending = run.conclusion, str(run.ending)
        hyp = run.sink.hypotheses.get(run.conclusion) if run.conclusion else None
        confidence = round(hyp.confidence, 4) if hyp is not None else None
        state = run.conclusion_state
        cost = {"steps": float(run.steps), "tool_calls": float(len(steps))}
        used += [e[len(KNOWLEDGE_EVENT) :] for e in run.events if e.startswith(KNOWLEDGE_EVENT)]
    label, truth = label_of(outcome, leads)
    moved = sorted(
        (e for e in (plan.candidates[0].evidence if plan and plan.candidates else ())
         if e.signal == "anomaly" and e.ref and (e.value or 0.0) > 0),
        key=lambda e: -(e.value or 0.0),
    )  # fmt: skip
    return Trajectory(
        fingerprint=outcome.fingerprint, signature=signature(outcome.alert),
        alert=dict(outcome.alert.labels), opened_at=float(outcome.opened_at),
        fired_at=outcome.alert.starts_at, plan_at=plan.at if plan is not None else None,
        program=str(program.get("program", "")), program_digest=str(program.get("digest", "")),
        leads=leads, steps=tuple(steps), stages=stages, conclusion=conclusion, ending=ending,
        confidence=confidence, state=state, cost=cost, knowledge=tuple(dict.fromkeys(used)),
        label=label, root_cause=truth, lead_series=tuple(str(e.ref) for e in moved),
    )  # fmt: skip


def trajectory_node(t: Trajectory, shadow: bool = False) -> NodeRecord:
    """The `Trajectory` node: the record as JSON, and what is queried (signature, label,
    when, program, the evidence's confidence in a conclusion) as properties."""
    concluded = t.conclusion is not None and t.confidence is not None
    props = {
        "signature": t.signature, "label": t.label, "opened_at": t.opened_at,
        "program": t.program, "shadow": shadow,
        **({"evidence_confidence": t.confidence, "evidence_state": t.state} if concluded else {}),
        "trajectory_json": json.dumps(t.to_dict(), sort_keys=True, default=str)[:1_000_000],
    }  # fmt: skip
    return NodeRecord("Trajectory", {"fingerprint": t.fingerprint}, props, SYNTHETIC)


def trajectory_records(outcome: IncidentOutcome) -> RecordBatch:
    """The trajectory as a `Trajectory` node and `Incident -TRACED_AS->` (shadow incidents
    too, marked: shadow mode is for watching, and its runs are worth learning from)."""
    node = trajectory_node(trajectory_of(outcome), outcome.shadow)
    batch = RecordBatch()
    batch.nodes.append(node)
    batch.edges.append(EdgeRecord("TRACED_AS", NodeRef("Incident", node.key),
                                  NodeRef("Trajectory", node.key), {}, SYNTHETIC))  # fmt: skip
    return batch
