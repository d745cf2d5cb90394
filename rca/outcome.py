"""Write-back: an investigated incident as node and edge records, and the writer that
stores them through `GraphIngestor`.

Records are built by pure functions (like a lane), so what is written is testable without
a store. The writer takes the single-writer lease *per write* and releases it at once, so
the ingest CronJob keeps running beside the API; a held lease is waited for, briefly.

    Alert -FIRED_ON-> Service(symptom)      Alert -TRIGGERED-> Incident -AFFECTS-> Service
    Incident -EVALUATED_AS-> Hypothesis -EVIDENCED_BY{tool,check}-> suspect
    Hypothesis -CITES-> Change               Incident -ROOT_CAUSED_BY-> suspect
        (ROOT_CAUSED_BY only for a Validated conclusion with confidence >= 0.40,
         or a root cause confirmed by feedback)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from stackgraph import cypher
from stackgraph.errors import InputError, LeaseHeldError
from stackgraph.ingest import GraphIngestor, IngestReport
from stackgraph.schema import EdgeRecord, NodeRecord, NodeRef, RecordBatch
from stackgraph.store import GraphStore

from .agent import ROOT_CAUSE_MIN_CONFIDENCE, AgentRun, HypothesisState, Verdict
from .agent.audit import signature
from .model import Alert, Plan

SYNTHETIC = "Synthetic"


@dataclass
class IncidentOutcome:
    """One incident as the service knows it; handed to `on_concluded` hooks (memory)."""

    fingerprint: str
    alert: Alert
    symptom: str
    opened_at: float
    plan: Plan | None = None
    run: AgentRun | None = None
    status: str = "open"
    """open | resolved"""
    shadow: bool = False
    feedback: str = "pending"
    """pending | confirmed | wrong"""
    confirmed_root_cause: str | None = None
    resolved_at: float | None = None
    alerts_seen: int = 1
    extra: dict[str, Any] = field(default_factory=dict)
    joined: list[Alert] = field(default_factory=list)
    """The other alerts grouped into this incident (a storm), each written as an Alert that
    TRIGGERED it."""

    @property
    def root_cause(self) -> str | None:
        """The concluded suspect when the conclusion is Validated (`AgentRun.conclusion_state`)
        with enough confidence."""
        if self.run is None or self.run.conclusion is None:
            return None
        hyp = self.run.sink.hypotheses.get(self.run.conclusion)
        if hyp is None or self.run.conclusion_state != HypothesisState.VALIDATED:
            return None
        return hyp.suspect if hyp.confidence >= ROOT_CAUSE_MIN_CONFIDENCE else None


def symptom_service(alert: Alert) -> str:
    labels = dict(alert.labels)
    return labels.get("service") or labels.get("job") or labels.get("app") or "unknown"


def evidence_chain(outcome: IncidentOutcome) -> list[dict[str, Any]]:
    if outcome.run is None:
        return []
    return [{**e.as_dict(), "rank": h.rank} for h in outcome.run.hypotheses for e in h.evidence]


def _svc(name: str, kind: str = "Service") -> NodeRef:
    return NodeRef(kind if kind in {"Service", "Datastore", "ExternalApi"} else "Service",
                   {"name": name})  # fmt: skip


def _alert_props(alert: Alert) -> dict[str, Any]:
    labels = dict(alert.labels)
    props: dict[str, Any] = {
        "alertname": labels.get("alertname", ""),
        "alert_status": alert.status,
        "labels_json": json.dumps(labels, sort_keys=True),
        "summary": str(alert.annotations.get("summary", "")),
    }
    if alert.starts_at is not None:
        props["starts_at"] = float(alert.starts_at)
    return props


def outcome_records(outcome: IncidentOutcome, symptom_exists: bool = True) -> RecordBatch:
    """Everything one incident writes. A symptom service the graph does not know is only
    named on the Incident (`service`, `symptom_known: false`): a label is no reason to
    create a Service, or anyone holding the token could fill the world-model with names.
    FIRED_ON and AFFECTS follow once a lane knows the service and the incident is written
    again (the alert resolving)."""
    batch = RecordBatch()
    fp = outcome.fingerprint
    shadow_status = "Candidate" if outcome.shadow else "Active"
    alert_ref = NodeRef("Alert", {"fingerprint": fp})
    incident_ref = NodeRef("Incident", {"fingerprint": fp})
    symptom = _svc(outcome.symptom)
    labels = dict(outcome.alert.labels)
    batch.nodes.append(NodeRecord("Alert", alert_ref.key, _alert_props(outcome.alert),
                                  "Prometheus", "Active"))  # fmt: skip
    run = outcome.run
    incident: dict[str, Any] = {
        "incident_status": outcome.status,
        "service": outcome.symptom,
        "alertname": labels.get("alertname", ""),
        "opened_at": float(outcome.opened_at),
        "shadow": outcome.shadow,
        "outcome": outcome.feedback,
        "alerts_seen": int(outcome.alerts_seen),
        "evidence_chain_json": json.dumps(evidence_chain(outcome), sort_keys=True),
        "symptom_known": symptom_exists,
    }
    if outcome.resolved_at is not None:
        incident["resolved_at"] = float(outcome.resolved_at)
    if run is not None:
        incident |= {"ending": str(run.ending), "report": run.report.text()[:20_000],
                     "conclusion": run.conclusion or ""}  # fmt: skip
    batch.nodes.append(NodeRecord("Incident", incident_ref.key, incident, SYNTHETIC, shadow_status))
    batch.edges.append(EdgeRecord("TRIGGERED", alert_ref, incident_ref, {}, SYNTHETIC))
    batch.extend(program_records(outcome.plan, incident_ref))
    if symptom_exists:
        batch.edges += [
            EdgeRecord("FIRED_ON", alert_ref, symptom, {}, "Prometheus"),
            EdgeRecord("AFFECTS", incident_ref, symptom, {}, SYNTHETIC, shadow_status),
        ]
    for other in outcome.joined:
        ref = NodeRef("Alert", {"fingerprint": str(other.fingerprint)})
        props = _alert_props(other)
        batch.nodes.append(NodeRecord("Alert", ref.key, props, "Prometheus", "Active"))
        batch.edges.append(EdgeRecord("TRIGGERED", ref, incident_ref, {}, SYNTHETIC))
    if run is None:
        return batch
    for h in run.hypotheses:
        h_ref = NodeRef("Hypothesis", {"incident_fingerprint": fp, "suspect_ref": h.suspect_ref})
        batch.nodes.append(NodeRecord("Hypothesis", h_ref.key, {
            "state": str(h.state), "rank": int(h.rank), "suspect": h.suspect,
            "shadow": outcome.shadow}, SYNTHETIC, shadow_status, h.confidence))  # fmt: skip
        batch.edges.append(EdgeRecord("EVALUATED_AS", incident_ref, h_ref, {}, SYNTHETIC))
        for ev in h.evidence:
            batch.edges.append(EdgeRecord("EVIDENCED_BY", h_ref, _svc(h.suspect, h.kind), {
                "tool": ev.tool, "check": ev.check or "default", "verdict": str(ev.verdict),
                "result_summary": ev.result_summary[:1000], "tool_status": ev.status,
            }, ev.source))  # fmt: skip
            if ev.tool.startswith("git_") and ev.verdict == Verdict.SUPPORTS:
                sha = ev.data.get("sha") or (ev.data.get("recent") or [{}])[0].get("sha")
                if sha and ev.data.get("repo"):
                    change = NodeRef("Change", {"repo": str(ev.data["repo"]), "commit_sha": sha})
                    batch.edges.append(EdgeRecord("CITES", h_ref, change, {}, "Git"))
    batch.extend(repair_records(outcome, incident_ref))
    cause = outcome.root_cause
    if cause is not None:
        hyp = run.sink.hypotheses[cause]
        # a later write (the alert resolving) must not revive a cause feedback rejected
        overruled = outcome.feedback == "wrong" or (
            outcome.feedback == "confirmed" and outcome.confirmed_root_cause != cause
        )
        status, conf = ("Deprecated", 0.0) if overruled else (shadow_status, hyp.confidence)
        batch.edges.append(EdgeRecord("ROOT_CAUSED_BY", incident_ref, _svc(cause, hyp.kind), {
            "outcome": "wrong" if overruled else outcome.feedback, "shadow": outcome.shadow,
            "by": "agent"}, SYNTHETIC, status, conf))  # fmt: skip
    return batch


def program_records(plan: Plan | None, incident_ref: NodeRef) -> RecordBatch:
    """The program that produced the incident's plan: a `Program` node keyed by what it
    computes (its digest), shared by every incident it planned, and PLANNED_WITH."""
    batch = RecordBatch()
    view = dict(plan.program) if plan is not None else {}
    if not view.get("digest"):
        return batch
    key = {"digest": str(view["digest"])}
    bindings = {"program": view.get("program"), "bindings": view.get("bindings", [])}
    batch.nodes.append(NodeRecord("Program", key, {
        "name": str(view.get("program", "")), "origin": str(view.get("origin", "")),
        "program_json": json.dumps(bindings, sort_keys=True),
    }, SYNTHETIC))  # fmt: skip
    batch.edges.append(EdgeRecord("PLANNED_WITH", incident_ref, NodeRef("Program", key), {
        "chosen_json": json.dumps(view.get("chosen", {}), sort_keys=True)}, SYNTHETIC))  # fmt: skip
    return batch


def repair_records(outcome: IncidentOutcome, incident_ref: NodeRef) -> RecordBatch:
    """Repair memory: each stage repair that raised the audit score, under the alert's
    signature, so the next alike alert tries it first (`audit_repairs.cypher`)."""
    batch = RecordBatch()
    audit = outcome.run.audit if outcome.run else None
    for r in (audit or {}).get("repairs", []):
        if r["gain"] <= 0 or outcome.shadow:
            continue
        key = {"signature": signature(outcome.alert), "stage": r["stage"], "patch": r["patch"]}
        batch.nodes.append(NodeRecord("Repair", key, {"gain": float(r["gain"])}, SYNTHETIC))
        batch.edges.append(EdgeRecord("REPAIRED_BY", incident_ref, NodeRef("Repair", key),
                                      {"gain": float(r["gain"])}, SYNTHETIC))  # fmt: skip
    return batch


def feedback_records(
    outcome: IncidentOutcome, verdict: str, root_cause: str | None, root_label: str = "Service"
) -> RecordBatch:
    """Feedback: the confirmed root cause (edge Active, confidence 1) or "wrong" (the
    agent's root cause is Deprecated). The read path's history prior reads Active edges."""
    batch = RecordBatch()
    shadow_status = "Candidate" if outcome.shadow else "Active"
    incident_ref = NodeRef("Incident", {"fingerprint": outcome.fingerprint})
    props: dict[str, Any] = {"outcome": verdict}
    if root_cause:
        props["confirmed_root_cause"] = root_cause
    batch.nodes.append(NodeRecord("Incident", incident_ref.key, props, SYNTHETIC, shadow_status))
    previous = outcome.root_cause
    if previous is not None and (verdict == "wrong" or previous != root_cause):
        batch.edges.append(EdgeRecord("ROOT_CAUSED_BY", incident_ref, _svc(previous), {
            "outcome": "wrong", "shadow": outcome.shadow, "by": "agent"},
            SYNTHETIC, "Deprecated", 0.0))  # fmt: skip
    if verdict == "confirmed" and root_cause:
        cause = _svc(root_cause, root_label)
        batch.edges.append(EdgeRecord("ROOT_CAUSED_BY", incident_ref, cause, {
            "outcome": "confirmed", "shadow": outcome.shadow, "by": "feedback"},
            SYNTHETIC, shadow_status, 1.0))  # fmt: skip
    return batch


class OutcomeWriter:
    """Writes outcome records through `GraphIngestor`, holding the lease only per write.

    A lease held by another writer (the ingest CronJob) is retried until `lease_wait_s`;
    then `LeaseHeldError` propagates and the caller reports it (nothing is dropped silently).
    """

    def __init__(
        self,
        store: GraphStore,
        *,
        batch_size: int = 5000,
        lease_ttl_s: float = 60.0,
        lease_wait_s: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store = store
        self.batch_size = batch_size
        self.lease_ttl_s = lease_ttl_s
        self.lease_wait_s = lease_wait_s
        self.sleep = sleep

    def symptom_exists(self, name: str) -> bool:
        return bool(self.store.read(cypher.load("sg_service_exists"), {"name": name}))

    @contextmanager
    def leased(self, who: str = "api-writeback") -> Iterator[GraphIngestor]:
        """A `GraphIngestor` holding the lease for one block of writes (e.g. a memory
        episode: read the current version, write the new one, expire the old one)."""
        waited = 0.0
        writer = GraphIngestor(self.store, self.batch_size, self.lease_ttl_s, who=who)
        while True:
            try:
                writer.lease.acquire()
                break
            except LeaseHeldError:
                if waited >= self.lease_wait_s:
                    raise
                self.sleep(0.5)
                waited += 0.5
        try:
            yield writer
        finally:
            writer.lease.release()

    def write(self, batch: RecordBatch) -> IngestReport:
        with self.leased() as writer:
            return writer.write(batch)

    def write_outcome(self, outcome: IncidentOutcome) -> IngestReport:
        batch = outcome_records(outcome, self.symptom_exists(outcome.symptom))
        return self.write(self._known_citations(batch))

    def _known_citations(self, batch: RecordBatch) -> RecordBatch:
        """CITES only Changes the change lane has read: a commit newer than its last run
        stays in the evidence, not as an edge the writer would reject (and `written` is
        true only when nothing was rejected)."""
        cites = [e for e in batch.edges if e.type == "CITES"]
        if not cites:
            return batch
        shas = sorted({str(e.dst.key["commit_sha"]) for e in cites})
        rows = self.store.read(cypher.load("lane_changes_by_sha"), {"shas": shas})
        found = {(r["repo"], r["sha"]) for r in rows}
        batch.edges = [e for e in batch.edges if e.type != "CITES"
                       or (e.dst.key["repo"], e.dst.key["commit_sha"]) in found]  # fmt: skip
        return batch

    def topology_label(self, name: str) -> str | None:
        rows = self.store.read(cypher.load("sg_topology_label"), {"name": name})
        return str(rows[0]["label"]) if rows else None

    def write_feedback(
        self, outcome: IncidentOutcome, verdict: str, root_cause: str | None
    ) -> IngestReport:
        """Raises `InputError` for a root cause the graph does not know."""
        label = "Service"
        if verdict == "confirmed" and root_cause:
            found = self.topology_label(root_cause)
            if found is None:
                raise InputError(
                    f"root_cause {root_cause!r}: no service, datastore or external API of that name"
                )
            label = found
        return self.write(feedback_records(outcome, verdict, root_cause, label))
