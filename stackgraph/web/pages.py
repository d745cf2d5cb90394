"""What the pages show, as pure functions of the JSON API's views (`IncidentDetail`), so a
page and `GET /api/v1/incidents...` can never disagree."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stackgraph.api.schemas import HypothesisView, IncidentDetail

__all__ = ["Filter", "ListRow", "PlanRow", "list_rows", "plan_rows", "root_confidence"]

STATUSES = ("open", "resolved")
STATES = ("queued", "investigating", "done", "failed")


@dataclass(frozen=True)
class Filter:
    """The incidents list's filter, from the query string (unknown values mean "any")."""

    q: str = ""
    status: str = ""
    state: str = ""

    @classmethod
    def of(cls, q: str | None, status: str | None, state: str | None) -> Filter:
        return cls((q or "").strip()[:200], status if status in STATUSES else "",
                   state if state in STATES else "")  # fmt: skip

    def keeps(self, d: IncidentDetail) -> bool:
        if self.status and d.status != self.status:
            return False
        if self.state and d.state != self.state:
            return False
        needle = self.q.casefold()
        hay = (d.fingerprint, d.alertname, d.symptom, d.root_cause or "")
        return not needle or any(needle in h.casefold() for h in hay)


@dataclass(frozen=True)
class ListRow:
    fingerprint: str
    alertname: str
    symptom: str
    status: str
    state: str
    root_cause: str | None
    confidence: float | None
    age_s: float
    shadow: bool
    feedback: str
    alert_count: int


def root_confidence(d: IncidentDetail) -> float | None:
    """The concluded root cause's confidence (1 once a person confirmed it)."""
    if d.feedback == "confirmed":
        return 1.0
    for h in d.hypotheses:
        if h.suspect == d.root_cause:
            return h.confidence
    return None


def list_rows(details: Iterable[IncidentDetail], keep: Filter, now: float) -> list[ListRow]:
    """Rows newest first (the store's order, by arrival), filtered."""
    return [
        ListRow(d.fingerprint, d.alertname, d.symptom, d.status, d.state, d.root_cause,
                root_confidence(d), now - d.opened_at, d.shadow, d.feedback, d.alert_count)
        for d in details if keep.keeps(d)
    ]  # fmt: skip


@dataclass(frozen=True)
class PlanRow:
    rank: int
    service: str
    kind: str
    score: float
    signals: list[tuple[str, float]]
    top_path: list[str]
    state: str | None
    confidence: float | None
    evidence: list[dict[str, Any]]


def plan_rows(d: IncidentDetail) -> list[PlanRow]:
    """The ranked plan, each candidate with its signals (largest first), its top path,
    its plan evidence and the state the agent's tools left its hypothesis in."""
    hyps: dict[str, HypothesisView] = {h.suspect: h for h in d.hypotheses}
    rows = []
    for i, c in enumerate((d.plan or {}).get("candidates") or []):
        name = str(c["service"])
        signals = sorted(((str(k), float(v)) for k, v in (c.get("signals") or {}).items()),
                         key=lambda kv: -kv[1])  # fmt: skip
        paths = c.get("paths") or []
        hyp = hyps.get(name)
        rows.append(PlanRow(i + 1, name, str(c.get("kind") or "Service"), float(c["score"]),
                            signals, [str(n) for n in paths[0]] if paths else [],
                            hyp.state if hyp else None, hyp.confidence if hyp else None,
                            list(c.get("evidence") or [])))  # fmt: skip
    return rows
