"""Incidents as API views (pure functions of the service's state)."""

from __future__ import annotations

from typing import Any

from stackgraph.rca.outcome import symptom_service

from .incident_store import Incident
from .schemas import EvidenceView, HypothesisView, IncidentDetail, IncidentSummary


def summary(incident: Incident) -> dict[str, Any]:
    o = incident.outcome
    run = o.run
    return {
        "fingerprint": o.fingerprint,
        "status": o.status,
        "state": incident.state,
        "symptom": o.symptom,
        "alertname": str(dict(o.alert.labels).get("alertname", "")),
        "opened_at": o.opened_at,
        "resolved_at": o.resolved_at,
        "alerts_seen": o.alerts_seen,
        "alert_count": incident.alert_count,
        "shadow": o.shadow,
        "feedback": o.feedback,
        "ending": str(run.ending) if run else None,
        "conclusion": run.conclusion if run else None,
        "root_cause": o.confirmed_root_cause or o.root_cause,
    }


def summary_view(incident: Incident) -> IncidentSummary:
    return IncidentSummary(**summary(incident))


def detail_view(incident: Incident) -> IncidentDetail:
    o = incident.outcome
    run = o.run
    data: dict[str, Any] = summary(incident)
    data["plan"] = o.plan.to_dict() if o.plan is not None else None
    data["error"] = incident.error
    data["writeback"] = dict(incident.writeback)
    data["alerts"] = [{"fingerprint": a.fingerprint, "status": a.status,
                       "alertname": str(dict(a.labels).get("alertname", "")),
                       "service": symptom_service(a), "starts_at": a.starts_at}
                      for a in incident.alerts]  # fmt: skip
    data["correlated"] = list(incident.correlated)
    data["investigations"] = incident.investigations
    if "memory" in o.extra:
        data["writeback"]["memory"] = o.extra["memory"]
    if run is not None:
        hyps = [HypothesisView(**h.as_dict()) for h in run.hypotheses]
        data["hypotheses"] = hyps
        data["evidence"] = [EvidenceView(**e.as_dict()) for e in run.sink.all_evidence]
        data["rejected_evidence"] = [{**e.as_dict(), "reason": why}
                                     for e, why in run.sink.rejected]  # fmt: skip
        data["report"] = run.report.as_dict()
        data["events"] = run.events
        data["audit"] = run.audit
    return IncidentDetail(**data)
