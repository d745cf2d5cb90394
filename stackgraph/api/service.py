"""The incident service: a bounded queue, a fixed pool of workers, open incidents by
fingerprint, and write-back through the single writer.

    webhook ─▶ receive() ─▶ queue (bounded; full → QueueFull → 503 Retry-After)
                               └▶ worker: plan_fn → agent → write-back → on_concluded hooks

The plan function and the agent are injected (the app gives `Planner.from_settings`, live
metrics included), so tests control the plan without depending on the ranking's details.
Incidents live in memory (and in the graph through write-back).
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stackgraph.errors import StackGraphError
from stackgraph.rca import Planner
from stackgraph.rca.agent import Agent, AgentRun, ToolContext
from stackgraph.rca.model import Alert, Plan
from stackgraph.rca.outcome import IncidentOutcome, OutcomeWriter, symptom_service
from stackgraph.store import GraphStore

from .metrics import ApiMetrics

log = logging.getLogger(__name__)

PlanFn = Callable[[GraphStore, Alert], Plan]
ContextFn = Callable[[Alert, Plan], ToolContext]
Hook = Callable[[IncidentOutcome], None]


class QueueFull(StackGraphError):
    """No room for another investigation; the sender should retry later."""


class UnknownIncident(StackGraphError):
    pass


@dataclass
class Incident:
    """What the API shows about one incident: the outcome plus its processing state."""

    outcome: IncidentOutcome
    state: str = "queued"
    """queued | investigating | done | failed"""
    error: str | None = None
    writeback: dict[str, Any] = field(default_factory=dict)
    done: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class Received:
    started: list[str]
    joined: list[str]
    closed: list[str]


class IncidentService:
    """Owns the queue and the workers. `start()` in the app's lifespan, `stop()` after."""

    def __init__(
        self,
        store: GraphStore,
        *,
        plan_fn: PlanFn | None = None,
        agent: Agent | None = None,
        context_fn: ContextFn | None = None,
        writer: OutcomeWriter | None = None,
        queue_size: int = 64,
        workers: int = 2,
        shadow: bool = False,
        metrics: ApiMetrics | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.plan_fn: PlanFn = plan_fn or Planner()
        self.agent = agent or Agent()
        self.context_fn = context_fn or (lambda alert, plan: ToolContext(store, alert, plan))
        self.writer = writer or OutcomeWriter(store)
        self.queue: queue.Queue[tuple[str, str] | None] = queue.Queue(maxsize=queue_size)
        self.n_workers = workers
        self.shadow = shadow
        self.metrics = metrics or ApiMetrics()
        self.clock = clock
        self.incidents: dict[str, Incident] = {}
        self.on_concluded: list[Hook] = []
        """Called with each finished outcome (the incident memory records episodes here)."""
        self.on_feedback: list[Hook] = []
        """Called after feedback was written (the memory supersedes the episode here)."""
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    # -- lifecycle --------------------------------------------------------------------

    def start(self) -> None:
        for i in range(self.n_workers):
            t = threading.Thread(target=self._work, name=f"sg-investigate-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self, timeout: float = 10.0) -> None:
        for _ in self._threads:
            with contextlib.suppress(queue.Full):
                self.queue.put(None, timeout=timeout)
        for t in self._threads:
            t.join(timeout=timeout)
        self._threads.clear()

    @property
    def alive(self) -> bool:
        return bool(self._threads) and all(t.is_alive() for t in self._threads)

    # -- intake -----------------------------------------------------------------------

    def _enqueue(self, kind: str, fingerprint: str) -> None:
        try:
            self.queue.put_nowait((kind, fingerprint))
        except queue.Full:
            self.metrics.alerts_rejected.inc()
            raise QueueFull(f"the investigation queue is full ({self.queue.maxsize})") from None
        self.metrics.queue_depth.set(self.queue.qsize())

    def receive(self, alerts: list[Alert]) -> Received:
        """Firing: start or join; resolved: close. Raises QueueFull (the caller answers 503;
        incidents already started in this call stay started, so a retry joins them)."""
        started: list[str] = []
        joined: list[str] = []
        closed: list[str] = []
        for alert in alerts:
            fp = str(alert.fingerprint)
            self.metrics.alerts_received.labels(alert.status).inc()
            with self._lock:
                current = self.incidents.get(fp)
                if alert.status == "resolved":
                    if current is None or current.outcome.status == "resolved":
                        continue
                    current.outcome.status = "resolved"
                    current.outcome.resolved_at = self.clock()
                    if current.state in ("done", "failed"):
                        try:
                            self._enqueue("write", fp)
                        except QueueFull:
                            current.outcome.status, current.outcome.resolved_at = "open", None
                            raise
                    closed.append(fp)
                    continue
                if current is not None and current.outcome.status == "open":
                    current.outcome.alerts_seen += 1
                    joined.append(fp)
                    continue
                opened = alert.starts_at if alert.starts_at is not None else self.clock()
                outcome = IncidentOutcome(fp, alert, symptom_service(alert), opened,
                                          shadow=self.shadow)  # fmt: skip
                self.incidents[fp] = Incident(outcome)
                try:
                    self._enqueue("investigate", fp)
                except QueueFull:
                    if current is None:
                        del self.incidents[fp]
                    else:
                        self.incidents[fp] = current
                    raise
                started.append(fp)
        return Received(started, joined, closed)

    def adhoc(self, alert: Alert, plan: Plan) -> str:
        """Queue an investigation of an ad hoc alert whose plan is already computed."""
        fp = f"adhoc-{uuid.uuid4().hex[:16]}"
        alert = Alert(alert.labels, alert.annotations, alert.starts_at, fp, "firing")
        outcome = IncidentOutcome(fp, alert, symptom_service(alert), self.clock(), plan=plan,
                                  shadow=self.shadow)  # fmt: skip
        with self._lock:
            self.incidents[fp] = Incident(outcome)
            try:
                self._enqueue("investigate", fp)
            except QueueFull:
                del self.incidents[fp]
                raise
        return fp

    def get(self, fingerprint: str) -> Incident:
        incident = self.incidents.get(fingerprint)
        if incident is None:
            raise UnknownIncident(f"no incident with fingerprint {fingerprint!r}")
        return incident

    # -- work -------------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            job = self.queue.get()
            self.metrics.queue_depth.set(self.queue.qsize())
            if job is None:
                return
            kind, fp = job
            incident = self.incidents.get(fp)
            if incident is None:
                continue
            try:
                if kind == "investigate":
                    self._investigate(incident)
                else:
                    self._write(incident)
            except Exception as exc:  # a worker never dies on one incident
                log.exception("incident %s failed", fp)
                incident.state, incident.error = "failed", f"{type(exc).__name__}: {exc}"
            finally:
                incident.done.set()

    def plan(self, alert: Alert) -> Plan:
        try:
            return self.plan_fn(self.store, alert)
        except Exception as exc:  # the read path is fail-open; so is its caller
            return Plan(anchor=None, candidates=[], reason=f"plan failed: {exc}")

    def _investigate(self, incident: Incident) -> None:
        incident.state = "investigating"
        outcome = incident.outcome
        started = time.monotonic()
        if outcome.plan is None:
            outcome.plan = self.plan(outcome.alert)
        run: AgentRun = self.agent.investigate(
            outcome.alert, outcome.plan, self.context_fn(outcome.alert, outcome.plan)
        )
        outcome.run = run
        self.metrics.duration.observe(time.monotonic() - started)
        self.metrics.investigations.labels(str(run.ending)).inc()
        self._write(incident)
        self._call(self.on_concluded, outcome)
        incident.state = "done" if incident.error is None else "failed"

    @staticmethod
    def _call(hooks: list[Hook], outcome: IncidentOutcome) -> None:
        for hook in list(hooks):
            try:
                hook(outcome)
            except Exception:  # a hook never fails the investigation or the feedback
                log.exception("hook %r failed", hook)

    def _write(self, incident: Incident) -> None:
        try:
            report = self.writer.write_outcome(incident.outcome)
        except StackGraphError as exc:
            self.metrics.writeback_failures.inc()
            incident.error = f"write-back failed: {exc}"
            incident.writeback = {"written": False, "error": str(exc)}
            return
        if report.rejected:  # written only if every record was; the rest are listed
            self.metrics.writeback_failures.inc()
        incident.writeback = {"written": not report.rejected, **report.as_dict()}

    def feedback(self, fingerprint: str, verdict: str, root_cause: str | None) -> Incident:
        incident = self.get(fingerprint)
        self.writer.write_feedback(incident.outcome, verdict, root_cause)
        incident.outcome.feedback = verdict
        incident.outcome.confirmed_root_cause = root_cause if verdict == "confirmed" else None
        self._call(self.on_feedback, incident.outcome)
        return incident
