"""Request and response bodies of the HTTP API (pydantic; they make the OpenAPI).

Request bodies are strict (`verify: 0` is not a bool, `endsAt: 0` not a time) and their
text is checked before it travels (`stackgraph.schema.text_problem`): a NUL, a lone
surrogate or another control character in a label, an annotation or a tool argument is a
422 naming the field, and label names, values and annotations have length caps.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    WithJsonSchema,
)

from stackgraph.rca.model import Alert
from stackgraph.schema import MAX_LABEL_CHARS, MAX_TEXT_CHARS, text_problem

_FINGERPRINT = r"^[A-Za-z0-9._-]{1,128}$"
_NAME = r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,252}$"
NAME_PATTERN = _NAME
"""A service / datastore name as routes accept it."""


def safe_text(value: str) -> str:
    """Refuse text that may not travel (the message names the character and where)."""
    problem = text_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _time_text(value: object) -> object:
    """Times come as RFC 3339 text (Alertmanager's); a number is not one."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise ValueError("must be an RFC 3339 time string")
    return _LAX_TIME.validate_python(value)


_LAX_TIME: TypeAdapter[datetime] = TypeAdapter(datetime)


def _whole(value: object) -> object:
    """JSON says `2.0` is an integer; strict pydantic would refuse it (a bool stays refused)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Whole = Annotated[int, BeforeValidator(_whole)]

SAFE_PATTERN = "^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]*$"
"""What `safe_text` lets through, as the OpenAPI document says it (clients and fuzzers)."""


def _text_schema(max_chars: int, min_chars: int = 0) -> dict[str, Any]:
    return {"type": "string", "minLength": min_chars, "maxLength": max_chars,
            "pattern": SAFE_PATTERN}  # fmt: skip


_SAFE = AfterValidator(safe_text)
LabelName = Annotated[str, StringConstraints(min_length=1, max_length=MAX_LABEL_CHARS), _SAFE,
                      WithJsonSchema(_text_schema(MAX_LABEL_CHARS, 1))]  # fmt: skip
ShortText = Annotated[str, StringConstraints(max_length=MAX_LABEL_CHARS), _SAFE,
                      WithJsonSchema(_text_schema(MAX_LABEL_CHARS))]  # fmt: skip
"""A label value, a receiver, a URL: at most MAX_LABEL_CHARS."""
Text = Annotated[str, StringConstraints(max_length=MAX_TEXT_CHARS), _SAFE,
                 WithJsonSchema(_text_schema(MAX_TEXT_CHARS))]  # fmt: skip
"""Free text (an annotation, a question): newlines and tabs pass, other controls do not."""
MAX_LABELS = 100


def _map_schema(value_chars: int, min_items: int = 0) -> WithJsonSchema:
    """Said as `propertyNames` + `additionalProperties` (pydantic would say
    `patternProperties`, which leaves other names unconstrained)."""
    return WithJsonSchema({
        "type": "object", "propertyNames": _text_schema(MAX_LABEL_CHARS, 1),
        "additionalProperties": _text_schema(value_chars), "minProperties": min_items,
        "maxProperties": MAX_LABELS,
    })  # fmt: skip


Labels = Annotated[dict[LabelName, ShortText], Field(max_length=MAX_LABELS),
                   _map_schema(MAX_LABEL_CHARS)]  # fmt: skip
SomeLabels = Annotated[dict[LabelName, ShortText], Field(min_length=1, max_length=MAX_LABELS),
                       _map_schema(MAX_LABEL_CHARS, 1)]  # fmt: skip
Annotations = Annotated[dict[LabelName, Text], Field(max_length=MAX_LABELS),
                        _map_schema(MAX_TEXT_CHARS)]  # fmt: skip
Time = Annotated[datetime, BeforeValidator(_time_text)]
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


class Readiness(BaseModel):
    ready: bool
    problems: list[str]


def utcnow() -> datetime:
    return datetime.now(UTC)
