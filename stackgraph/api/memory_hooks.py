"""The incident memory, wired into the incident service.

    investigation concluded ─▶ on_concluded ─▶ record_episode   (version 1, or nothing new)
    feedback                ─▶ on_feedback  ─▶ supersede(kind="correction")

Both write through the single writer, taking the lease per write like the graph
write-back (`OutcomeWriter.leased`). A memory failure is logged, counted
(`stackgraph_memory_failures_total{op}`) and shown on the incident; it never fails the
investigation, the webhook or the feedback, and it never removes what is stored: a new
version is written before the old one is closed.
"""

from __future__ import annotations

import logging
from typing import Any

from stackgraph.config import Settings
from stackgraph.errors import ConfigError
from stackgraph.memory import EntityRef, Memory, current_version, record_episode, supersede
from stackgraph.memory import IncidentOutcome as Episode
from stackgraph.rca.agent import Verdict
from stackgraph.rca.outcome import IncidentOutcome, OutcomeWriter
from stackgraph.store import GraphStore

from .metrics import ApiMetrics

log = logging.getLogger(__name__)

_ENTITY_OF_KIND = {"Service": "service", "Datastore": "datastore", "ExternalApi": "external_api"}


def open_api_memory(settings: Settings, store: GraphStore, metrics: ApiMetrics) -> Memory | None:
    """The memory for the app's lifetime. A dimension or model mismatch is a configuration
    error and stops start-up (ConfigError); an unreachable vector store only disables the
    memory (logged and counted), so alerts are still investigated."""
    from stackgraph.memory import memory_for

    try:
        return memory_for(settings, store)
    except ConfigError:
        raise
    except Exception as exc:  # the API runs without memory rather than not at all
        metrics.memory_failures.labels("open").inc()
        log.error("incident memory not available: %s: %s", type(exc).__name__, exc)
        return None


def episode_of(outcome: IncidentOutcome) -> Episode:
    """What the memory keeps of an investigated incident: the symptom, the root cause
    (confirmed by feedback, else the agent's validated one), the supporting evidence."""
    labels = dict(outcome.alert.labels)
    alertname = labels.get("alertname", "")
    summary = str(outcome.alert.annotations.get("summary", "")).strip()
    symptom = summary or f"{alertname or 'alert'} fired on {outcome.symptom}"
    cause = outcome.confirmed_root_cause if outcome.feedback == "confirmed" else None
    if cause is None and outcome.feedback != "wrong":
        cause = outcome.root_cause
    entities: list[EntityRef] = []
    evidence: list[str] = []
    if outcome.run is not None:
        hyp = outcome.run.sink.hypotheses.get(cause or "")
        if hyp is not None:
            entities.append(EntityRef(_ENTITY_OF_KIND.get(hyp.kind, "service"), hyp.suspect))
            evidence = [
                f"{e.tool}: {e.result_summary[:200]}"
                for e in hyp.evidence
                if e.verdict == Verdict.SUPPORTS
            ]
    if cause and not entities:
        entities.append(EntityRef("service", cause))
    if outcome.feedback == "wrong" and outcome.root_cause:
        evidence.append(f"feedback: {outcome.root_cause} was not the root cause")
    return Episode(
        incident_fingerprint=outcome.fingerprint,
        service=outcome.symptom,
        symptom=symptom,
        occurred_at=float(outcome.opened_at),
        alert=alertname,
        root_cause=cause or "",
        evidence="; ".join(evidence)[:4000],
        entities=entities,
        source="Synthetic",
    )


class EpisodeRecorder:
    """`on_concluded` / `on_feedback` hooks of `IncidentService`; never raise."""

    def __init__(self, memory: Memory, writer: OutcomeWriter, metrics: ApiMetrics) -> None:
        self.memory = memory
        self.writer = writer
        self.metrics = metrics

    def concluded(self, outcome: IncidentOutcome) -> None:
        self._guard("record", outcome, self._record)

    def feedback(self, outcome: IncidentOutcome) -> None:
        self._guard("supersede", outcome, self._correct)

    def _guard(self, op: str, outcome: IncidentOutcome, fn: Any) -> None:
        if outcome.shadow:
            outcome.extra["memory"] = {"recorded": False, "reason": "shadow mode"}
            return
        try:
            outcome.extra["memory"] = fn(outcome)
        except Exception as exc:  # the memory must never fail an investigation or feedback
            self.metrics.memory_failures.labels(op).inc()
            log.error("memory %s of incident %s failed: %s: %s", op, outcome.fingerprint,
                      type(exc).__name__, exc)  # fmt: skip
            outcome.extra["memory"] = {"recorded": False, "error": f"{type(exc).__name__}: {exc}"}

    def _record(self, outcome: IncidentOutcome) -> dict[str, Any]:
        with self.writer.leased("api-memory") as w:
            v = record_episode(w, episode_of(outcome), self.memory)
        return {"recorded": True, "version": v.version, "written": v.created}

    def _correct(self, outcome: IncidentOutcome) -> dict[str, Any]:
        episode = episode_of(outcome)
        with self.writer.leased("api-memory") as w:
            cur = current_version(w.store, outcome.fingerprint)
            if cur is None or cur.fields.get("body_hash") == episode.body_hash():
                v = record_episode(w, episode, self.memory)  # none yet, or nothing new
                return {"recorded": True, "version": v.version, "written": v.created}
            written = supersede(w, episode, self.memory, kind="correction",
                                reason=f"feedback: {outcome.feedback}")  # fmt: skip
        return {"recorded": True, "version": written[-1].version, "written": True}
