"""An incident's alert and agent run as JSON and back, losslessly, so an incident record in
Redis is the same incident to every replica and after a restart (the views, feedback and
the memory hooks read the objects, not a summary of them)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from stackgraph.rca.agent import (
    Action,
    AgentRun,
    Calibrated,
    Ending,
    EvidenceSink,
    Hypothesis,
    Report,
    ToolEvidence,
    Verdict,
)
from stackgraph.rca.agent.audit import Claims
from stackgraph.rca.agent.evidence import optional_number
from stackgraph.rca.model import Alert


def dumps(value: Any) -> str:
    """Compact JSON; values JSON cannot hold (a tool's odd data) become strings."""
    return json.dumps(value, separators=(",", ":"), default=str)


def alert_doc(alert: Alert) -> dict[str, Any]:
    return {"labels": dict(alert.labels), "annotations": dict(alert.annotations),
            "starts_at": alert.starts_at, "fingerprint": alert.fingerprint,
            "status": alert.status}  # fmt: skip


def alert_from(d: Mapping[str, Any]) -> Alert:
    starts = d.get("starts_at")
    return Alert(dict(d.get("labels") or {}), dict(d.get("annotations") or {}),
                 float(starts) if starts is not None else None, d.get("fingerprint"),
                 str(d.get("status", "firing")))  # fmt: skip


def _evidence_doc(e: ToolEvidence) -> dict[str, Any]:
    return {**asdict(e), "verdict": str(e.verdict)}


def _evidence_from(d: Mapping[str, Any]) -> ToolEvidence:
    return ToolEvidence(
        tool=str(d["tool"]), verdict=Verdict(d["verdict"]),
        result_summary=str(d.get("result_summary", "")), source=str(d.get("source", "")),
        check=str(d.get("check", "")), hypothesis=str(d.get("hypothesis", "")),
        status=str(d.get("status", "success")), data=dict(d.get("data") or {}),
        window=_span(d.get("window")), baseline=_span(d.get("baseline")),
        changed_at=optional_number(d.get("changed_at")),
        resolution_s=optional_number(d.get("resolution_s")),
        judged_windows=tuple((float(t), Verdict(v)) for t, v in d.get("judged_windows") or ()),
    )  # fmt: skip


def _span(value: Any) -> tuple[float, float] | None:
    return (float(value[0]), float(value[1])) if value else None


def run_doc(run: AgentRun) -> dict[str, Any]:
    """Everything `run_from` needs; the hypotheses keep their plan order."""
    hyps = [{"suspect": h.suspect, "rank": h.rank, "prior": h.prior, "kind": h.kind,
             "suggested_tools": list(h.suggested_tools),
             "evidence": [_evidence_doc(e) for e in h.evidence]}
            for h in run.sink.hypotheses.values()]  # fmt: skip
    r = run.report
    return {
        "ending": str(run.ending), "conclusion": run.conclusion, "steps": run.steps,
        "llm_used": run.llm_used, "events": list(run.events), "hypotheses": hyps,
        "claims": {"path": list(run.claims.path) if run.claims.path else None,
                   "confidence": run.claims.confidence},
        "audit": run.audit,
        "rejected": [{"evidence": _evidence_doc(e), "reason": why} for e, why in run.sink.rejected],
        "report": {"diagnosis": r.diagnosis, "summary": r.summary,
                   "actions": [asdict(a) for a in r.actions], "ending": r.ending,
                   "narration": r.narration, "notes": list(r.notes), "similar": r.similar,
                   "calibration": r.calibration.as_dict() if r.calibration else None},
    }  # fmt: skip


def run_from(d: Mapping[str, Any]) -> AgentRun:
    sink = EvidenceSink()
    for h in d.get("hypotheses") or ():
        sink.hypotheses[str(h["suspect"])] = Hypothesis(
            suspect=str(h["suspect"]), rank=int(h["rank"]), prior=float(h.get("prior", 0.0)),
            kind=str(h.get("kind", "Service")),
            suggested_tools=tuple(h.get("suggested_tools") or ()),
            evidence=[_evidence_from(e) for e in h.get("evidence") or ()],
        )  # fmt: skip
    sink.rejected = [(_evidence_from(r["evidence"]), str(r["reason"]))
                     for r in d.get("rejected") or ()]  # fmt: skip
    rep = d.get("report") or {}
    report = Report(
        diagnosis=list(rep.get("diagnosis") or []), summary=str(rep.get("summary", "")),
        actions=[Action(**a) for a in rep.get("actions") or ()],
        ending=str(rep.get("ending", "")), narration=str(rep.get("narration", "")),
        notes=list(rep.get("notes") or []), similar=list(rep.get("similar") or []),
        calibration=Calibrated(**rep["calibration"]) if rep.get("calibration") else None,
    )  # fmt: skip
    return AgentRun(ending=Ending(d["ending"]), conclusion=d.get("conclusion"), sink=sink,
                    report=report, steps=int(d.get("steps", 0)),
                    llm_used=bool(d.get("llm_used", False)),
                    events=list(d.get("events") or []), claims=_claims(d.get("claims")),
                    audit=d.get("audit"))  # fmt: skip


def _claims(d: Mapping[str, Any] | None) -> Claims:
    if not d:
        return Claims()
    path, conf = d.get("path"), d.get("confidence")
    return Claims(tuple(path) if path else None, optional_number(conf))
