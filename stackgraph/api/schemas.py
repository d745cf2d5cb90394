"""Request and response bodies of the HTTP API (pydantic; they make the OpenAPI).

Request bodies are strict (`verify: 0` is not a bool, `endsAt: 0` not a time) and their
text is checked before it travels (`stackgraph.inputs`): a NUL, a lone surrogate or another
control character in a label, an annotation or a tool argument is a 422 naming the field,
and label names, values and annotations have length caps.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from stackgraph.inputs import (
    NAME_PATTERN,
    Annotations,
    Labels,
    ShortText,
    SomeLabels,
    Text,
    Time,
    Whole,
)
from stackgraph.rca.model import Alert

_FINGERPRINT = r"^[A-Za-z0-9._-]{1,128}$"
_NAME = NAME_PATTERN
_STRICT = ConfigDict(strict=True)


class AlertmanagerAlert(BaseModel):
    """One alert of an Alertmanager webhook (payload version 4)."""

    model_config = _STRICT

    status: Literal["firing", "resolved"]
    labels: Labels
    annotations: Annotations = Field(default_factory=dict)
    startsAt: Time | None = None
    endsAt: Time | None = None
    generatorURL: ShortText = ""
    fingerprint: str = Field(pattern=_FINGERPRINT)

    def to_alert(self) -> Alert:
        starts = self.startsAt.timestamp() if self.startsAt and self.startsAt.year > 1 else None
        return Alert(dict(self.labels), dict(self.annotations), starts, self.fingerprint,
                     self.status)  # fmt: skip


class AlertmanagerWebhook(BaseModel):
    """Alertmanager's webhook body, version 4 (COMPONENTS.md §5)."""

    model_config = ConfigDict(extra="ignore", strict=True)

    version: Literal["4"] = "4"
    groupKey: Text = ""
    truncatedAlerts: Whole = Field(default=0, ge=0)
    status: Literal["firing", "resolved"]
    receiver: ShortText
    groupLabels: Labels = Field(default_factory=dict)
    commonLabels: Labels = Field(default_factory=dict)
    commonAnnotations: Annotations = Field(default_factory=dict)
    externalURL: ShortText = ""
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
    window: list[float] | None = Field(default=None, description="The alert window read.")
    baseline: list[float] | None = Field(default=None, description="The baseline compared.")


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
    audit: dict[str, Any] | None = Field(
        default=None,
        description="Stage audit: score, route (pass/fast/slow), per-stage scores and "
        "problems, repairs, and the four stage artifacts (EP, HS, AS, DR).",
    )


class InvestigateRequest(BaseModel):
    """An ad hoc investigation: labels as an alert would carry them."""

    model_config = _STRICT

    labels: SomeLabels
    annotations: Annotations = Field(default_factory=dict)
    at: float | None = Field(default=None, ge=0, le=32503680000)
    hops: Whole = Field(default=2, ge=1, le=4)
    limit: Whole = Field(default=10, ge=1, le=50)
    verify: bool = Field(default=True, description="Queue the agent to verify the plan.")

    def to_alert(self, fingerprint: str) -> Alert:
        return Alert(dict(self.labels), dict(self.annotations), self.at, fingerprint)


class InvestigateAccepted(BaseModel):
    fingerprint: str | None
    queued: bool
    plan: dict[str, Any]


class ConfirmedFeedback(BaseModel):
    """The root cause was this service (or datastore, or external API)."""

    model_config = _STRICT

    verdict: Literal["confirmed"]
    root_cause: str = Field(pattern=_NAME, description="The confirmed root cause.")


class WrongFeedback(BaseModel):
    """The agent's root cause was wrong."""

    model_config = _STRICT

    verdict: Literal["wrong"]
    root_cause: None = None


FeedbackRequest = Annotated[ConfirmedFeedback | WrongFeedback, Field(discriminator="verdict")]
"""`confirmed` needs `root_cause`; the document says so (a tagged union), not only the code."""


class GraphQuery(BaseModel):
    model_config = _STRICT

    service: str = Field(pattern=_NAME)
    other: str | None = Field(default=None, pattern=_NAME)
    hops: Whole = Field(default=1, ge=1, le=4)
    raw: bool = False
    limit: Whole = Field(default=100, ge=1, le=500)


class Problem(BaseModel):
    detail: str


class Readiness(BaseModel):
    ready: bool
    problems: list[str]
