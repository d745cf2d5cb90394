"""Request and response bodies of the HTTP API (pydantic; they make the OpenAPI)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from stackgraph.rca.model import Alert

_FINGERPRINT = r"^[A-Za-z0-9._-]{1,128}$"
_NAME = r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,252}$"
Labels = dict[str, str]
NAME_PATTERN = _NAME
"""A service / datastore name as routes accept it."""


class AlertmanagerAlert(BaseModel):
    """One alert of an Alertmanager webhook (payload version 4)."""

    status: Literal["firing", "resolved"]
    labels: Labels = Field(max_length=100)
    annotations: Labels = Field(default_factory=dict, max_length=100)
    startsAt: datetime | None = None
    endsAt: datetime | None = None
    generatorURL: str = ""
    fingerprint: str = Field(pattern=_FINGERPRINT)

    def to_alert(self) -> Alert:
        starts = self.startsAt.timestamp() if self.startsAt and self.startsAt.year > 1 else None
        return Alert(dict(self.labels), dict(self.annotations), starts, self.fingerprint,
                     self.status)  # fmt: skip


class AlertmanagerWebhook(BaseModel):
    """Alertmanager's webhook body, version 4 (COMPONENTS.md §5)."""

    model_config = ConfigDict(extra="ignore")

    version: Literal["4"] = "4"
    groupKey: str = ""
    truncatedAlerts: int = 0
    status: Literal["firing", "resolved"]
    receiver: str
    groupLabels: Labels = Field(default_factory=dict)
    commonLabels: Labels = Field(default_factory=dict)
    commonAnnotations: Labels = Field(default_factory=dict)
    externalURL: str = ""
    alerts: list[AlertmanagerAlert] = Field(min_length=1, max_length=1000)


class AlertsAccepted(BaseModel):
    started: list[str] = Field(description="Fingerprints whose investigation was queued.")
    joined: list[str] = Field(description="Re-sent alerts that joined an open incident.")
    closed: list[str] = Field(description="Resolved alerts that closed their incident.")


class EvidenceView(BaseModel):
    tool: str
    check: str
    hypothesis: str
    verdict: Literal["supports", "refutes", "inconclusive"]
    result_summary: str
    source: str
    status: str


class HypothesisView(BaseModel):
    suspect: str
    suspect_ref: str
    kind: str
    rank: int
    state: Literal["Candidate", "Supported", "Refuted", "Validated"]
    confidence: float
    evidence: list[EvidenceView]


class IncidentSummary(BaseModel):
    fingerprint: str
    status: Literal["open", "resolved"]
    state: Literal["queued", "investigating", "done", "failed"]
    symptom: str
    alertname: str
    opened_at: float
    resolved_at: float | None = None
    alerts_seen: int
    alert_count: int = Field(default=1, description="Distinct alerts grouped in the incident.")
    shadow: bool
    feedback: Literal["pending", "confirmed", "wrong"]
    ending: str | None = None
    conclusion: str | None = None
    root_cause: str | None = None


class IncidentDetail(IncidentSummary):
    plan: dict[str, Any] | None = None
    hypotheses: list[HypothesisView] = []
    evidence: list[EvidenceView] = []
    rejected_evidence: list[dict[str, Any]] = []
    report: dict[str, Any] | None = None
    events: list[str] = []
    error: str | None = None
    writeback: dict[str, Any] = {}
    alerts: list[dict[str, Any]] = Field(default=[], description="Every alert of the incident.")
    correlated: list[dict[str, Any]] = Field(
        default=[], description="Incidents grouped into this one after planning, and why."
    )
    investigations: int = Field(default=0, description="Agent runs (1 unless one was cut off).")


class InvestigateRequest(BaseModel):
    """An ad hoc investigation: labels as an alert would carry them."""

    labels: Labels = Field(min_length=1, max_length=100)
    annotations: Labels = Field(default_factory=dict, max_length=100)
    at: float | None = Field(default=None, ge=0, le=32503680000)
    hops: int = Field(default=2, ge=1, le=4)
    limit: int = Field(default=10, ge=1, le=50)
    verify: bool = Field(default=True, description="Queue the agent to verify the plan.")

    def to_alert(self, fingerprint: str) -> Alert:
        return Alert(dict(self.labels), dict(self.annotations), self.at, fingerprint)


class InvestigateAccepted(BaseModel):
    fingerprint: str | None
    queued: bool
    plan: dict[str, Any]


class FeedbackRequest(BaseModel):
    verdict: Literal["confirmed", "wrong"]
    root_cause: str | None = Field(
        default=None, pattern=_NAME, description="The confirmed root-cause service."
    )


class GraphQuery(BaseModel):
    service: str = Field(pattern=_NAME)
    other: str | None = Field(default=None, pattern=_NAME)
    hops: int = Field(default=1, ge=1, le=4)
    raw: bool = False
    limit: int = Field(default=100, ge=1, le=500)


class TripleView(BaseModel):
    src: str
    src_label: str
    type: str
    dst: str
    dst_label: str
    props: dict[str, Any]


class GraphAnswerView(BaseModel):
    service: str
    other: str | None
    hops: int
    sentences: list[str]
    paths: list[list[str]]
    triples: list[TripleView]
    reason: str


class Problem(BaseModel):
    detail: str


def utcnow() -> datetime:
    return datetime.now(UTC)
