"""The incident service: durable intake, workers on the job stream, write-back through the
single writer.

    webhook ─▶ receive() ─▶ IncidentStore.intake: records + job stream, one atomic script
                              (backlog at the bound → QueueFull → 503 Retry-After)
    WorkerPool ─▶ investigate job: plan → group (correlation.py) → agent → write-back
                                   → on_concluded hooks → done
               ─▶ write job: write a finished incident again (alerts joined, resolution)

Nothing lives only in this process: records and jobs are in the Redis that FalkorDB is,
so a replica or a restarted process continues any incident. Delivery is at least once;
each step checks the record first (planned? investigated? done?), and write-back is
idempotent by fingerprint. The plan function and the agent are injected (the app gives
`Planner.from_settings`), so tests control the plan without the ranking's details.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from stackgraph.errors import LeaseHeldError, StoreError, StoreUnavailable
from stackgraph.rca import Planner
from stackgraph.rca.agent import Agent, ToolContext
from stackgraph.rca.model import Alert, Plan
from stackgraph.rca.outcome import IncidentOutcome, OutcomeWriter
from stackgraph.store import GraphStore

from .correlation import CorrelationKey
from .escalation import Escalation
from .incident_store import (
    FINISHED,
    Incident,
    IncidentStore,
    QueueFull,
    Received,
    UnknownIncident,
    outcome_fields,
)
from .job_queue import Job, JobQueue
from .metrics import ApiMetrics
from .outcome_codec import dumps
from .workers import WorkerPool

log = logging.getLogger(__name__)

PlanFn = Callable[[GraphStore, Alert], Plan]
ContextFn = Callable[[Alert, Plan], ToolContext]
Hook = Callable[[IncidentOutcome], None]

__all__ = ["Incident", "IncidentService", "QueueFull", "Received", "UnknownIncident"]


class IncidentService:
    """Owns the records, the job queue and the workers. `start()` in the app's lifespan,
    `stop()` after. `store` is the primary (records, jobs, write-back); `reader`, when
    given, serves the plans (a FalkorDB replica)."""

    def __init__(
        self,
        store: GraphStore,
        *,
        reader: GraphStore | None = None,
        plan_fn: PlanFn | None = None,
        agent: Agent | None = None,
        context_fn: ContextFn | None = None,
        writer: OutcomeWriter | None = None,
        queue_size: int = 64,
        workers: int = 2,
        shadow: bool = False,
        metrics: ApiMetrics | None = None,
        clock: Callable[[], float] = time.time,
        correlation_window_s: float = 300.0,
        claim_idle_s: float = 60.0,
        retention_s: float = 7 * 86400.0,
        escalation: Escalation | None = None,
    ) -> None:
        self.store = store
        self.reader = reader or store
        self.plan_fn: PlanFn = plan_fn or Planner()
        self.agent = agent or Agent()
        self.context_fn = context_fn or (lambda alert, plan: ToolContext(self.reader, alert, plan))
        self.writer = writer or OutcomeWriter(store)
        self.shadow = shadow
        self.escalation = escalation
        """When every lead of a plan is refuted: the next plan, from a new program."""
        self.metrics = metrics or ApiMetrics()
        self.records = IncidentStore(store, window_s=correlation_window_s,
                                     retention_s=retention_s, queue_size=queue_size,
                                     clock=clock)  # fmt: skip
        self.jobs = JobQueue(store, claim_idle_s=claim_idle_s)
        self.pool = WorkerPool(self.jobs, self.handle, workers=workers, claim_idle_s=claim_idle_s,
                               maintain=self.maintain)  # fmt: skip
        self.metrics.queue_depth.set_function(self._backlog)
        self.on_concluded: list[Hook] = []
        """Called with each finished outcome (the incident memory records episodes here)."""
        self.on_feedback: list[Hook] = []
        """Called after feedback was written (the memory supersedes the episode here)."""

    # -- lifecycle --------------------------------------------------------------------

    def start(self) -> None:
        self.jobs.ensure_group()
        self.pool.start()

    def stop(self, timeout: float = 10.0) -> None:
        self.pool.stop(timeout)

    @property
    def alive(self) -> bool:
        return self.pool.alive

    def _backlog(self) -> float:
        try:
            return float(self.jobs.backlog())
        except StoreError:
            return float("nan")

    def maintain(self) -> None:
        """Retention and housekeeping; the pool's keeper runs it now and then."""
        self.records.trim()
        self.jobs.forget_idle_consumers()

    # -- intake -----------------------------------------------------------------------

    def receive(self, alerts: list[Alert]) -> Received:
        """Firing: start or join; resolved: close. All or nothing: raises QueueFull (503)
        or StoreUnavailable (503) and then nothing of the call is recorded."""
        for alert in alerts:
            self.metrics.alerts_received.labels(alert.status).inc()
        try:
            return self.records.intake(alerts, shadow=self.shadow)
        except QueueFull:
            self.metrics.alerts_rejected.inc(len(alerts))
            raise

    def adhoc(self, alert: Alert, plan: Plan) -> str:
        """Queue an investigation of an ad hoc alert whose plan is already computed."""
        fp = f"adhoc-{uuid.uuid4().hex[:16]}"
        alert = Alert(alert.labels, alert.annotations, alert.starts_at, fp, "firing")
        try:
            self.records.intake([alert], shadow=self.shadow, plan=plan)
        except QueueFull:
            self.metrics.alerts_rejected.inc()
            raise
        return fp

    def get(self, fingerprint: str) -> Incident:
        """An incident by its fingerprint or by the fingerprint of any of its alerts."""
        return self.records.get(fingerprint)

    def page(self, offset: int = 0, limit: int = 100) -> tuple[list[Incident], int]:
        return self.records.page(offset, limit)

    def plan(self, alert: Alert) -> Plan:
        try:
            return self.plan_fn(self.reader, alert)
        except Exception as exc:  # the read path is fail-open; so is its caller
            return Plan(anchor=None, candidates=[], reason=f"plan failed: {exc}")

    # -- work -------------------------------------------------------------------------

    def handle(self, job: Job, consumer: str) -> None:
        """One job; safe to run again for the same job (at-least-once delivery)."""
        try:
            incident = self.records.load(job.incident)
        except UnknownIncident:
            return  # grouped into another incident, or past retention
        if job.kind == "write":
            self._rewrite(incident)
        elif incident.state not in FINISHED:
            self._investigate(incident, consumer)

    def _investigate(self, incident: Incident, consumer: str) -> None:
        fp, outcome = incident.fingerprint, incident.outcome
        if not self.records.update(fp, state="investigating"):
            return
        if outcome.plan is None:
            outcome.plan = self.plan(outcome.alert)
            self.records.update(fp, plan=dumps(outcome.plan.to_dict()))
        if not incident.adhoc and self.records.window_s > 0:
            goes_on = self.records.correlate(fp, CorrelationKey.of(outcome.plan))
            if goes_on != fp:
                self.metrics.incidents_grouped.inc()
                log.info("incident %s joined incident %s", fp, goes_on or "(gone)")
                return
        if outcome.run is None:  # a retried job whose run was stored goes on to write-back
            started = time.monotonic()
            outcome.run = self.agent.investigate(
                outcome.alert, outcome.plan, self.context_fn(outcome.alert, outcome.plan)
            )
            if self.escalation is not None and self.escalation(self.reader, outcome):
                self.metrics.escalations.inc()
            self.metrics.duration.observe(time.monotonic() - started)
            self.metrics.investigations.labels(str(outcome.run.ending)).inc()
            if outcome.run.audit is not None:
                self.metrics.audits.labels(str(outcome.run.audit["route"])).inc()
            self.records.update(fp, investigations=incident.investigations + 1,
                                investigated_by=consumer, **outcome_fields(outcome))  # fmt: skip
        current = self.records.load(fp)  # with what joined or resolved meanwhile
        writeback, error = self._write(current)
        self._call(self.on_concluded, current.outcome)
        self.records.finish(fp, current.rev, state="failed" if error else "done",
                            error=error or "", writeback=dumps(writeback),
                            **outcome_fields(current.outcome))  # fmt: skip

    def _rewrite(self, incident: Incident) -> None:
        self.records.clear_write_pending(incident.fingerprint)
        if incident.state not in FINISHED:
            return  # the investigation writes it, and `finish` queues what came after
        incident = self.records.load(incident.fingerprint)
        writeback, error = self._write(incident)
        fields: dict[str, Any] = {"writeback": dumps(writeback)}
        if error:
            fields["error"] = error
        self.records.update(incident.fingerprint, **fields)

    @staticmethod
    def _call(hooks: list[Hook], outcome: IncidentOutcome) -> None:
        for hook in list(hooks):
            try:
                hook(outcome)
            except Exception:  # a hook never fails the investigation or the feedback
                log.exception("hook %r failed", hook)

    def _write(self, incident: Incident) -> tuple[dict[str, Any], str | None]:
        """(write-back result, error). Raises the transient errors (store unreachable,
        lease held past its wait), so the job is retried rather than failed."""
        fp = incident.fingerprint
        try:
            report = self.writer.write_outcome(incident.outcome)
        except (StoreUnavailable, LeaseHeldError) as exc:
            self.metrics.writeback_failures.inc()
            self.records.update(fp, writeback=dumps({"written": False, "error": str(exc),
                                                     "retrying": True}))  # fmt: skip
            raise
        except StoreError as exc:
            self.metrics.writeback_failures.inc()
            return {"written": False, "error": str(exc)}, f"write-back failed: {exc}"
        if report.rejected:  # written only if every record was; the rest are listed
            self.metrics.writeback_failures.inc()
        return {"written": not report.rejected, **report.as_dict()}, None

    def feedback(self, fingerprint: str, verdict: str, root_cause: str | None) -> Incident:
        incident = self.get(fingerprint)
        outcome = incident.outcome
        self.writer.write_feedback(outcome, verdict, root_cause)
        outcome.feedback = verdict
        outcome.confirmed_root_cause = root_cause if verdict == "confirmed" else None
        self._call(self.on_feedback, outcome)
        self.records.update(incident.fingerprint, feedback=verdict,
                            confirmed_root_cause=outcome.confirmed_root_cause or "",
                            **outcome_fields(outcome))  # fmt: skip
        return incident
