"""Replay one labelled incident through the product path.

The dataset's telemetry is already in a real Prometheus (see `harness`). For each case,
in a graph key of its own:

    catalog lane    criticality, where the dataset states it
    infra lane      the dataset's Kubernetes manifests; without them, the inventory the
                    cluster's API would list (a Deployment and a Service per service)
    change lane     its releases, as a Flux HelmRelease status dump
    telemetry lane  Tempo's service graph from Prometheus, as the CronJob would have run it
                    every `LANE_EVERY_S` while the case was recorded (its baseline, then
                    from the fault to the alert; not in a gap between two recordings)
    alert           fired where the symptom's own series say (`alerting.detect_alert`)
    investigate     `Planner` with `PrometheusMetrics`: the code the API runs, with its
                    own windows (the labelled fault start and the dataset's fault-free
                    window only place the data and the alert, never the plan's baseline)
    attempts        the plan's program, then stages 2-3 of `rca.programs` on the same
                    engine, each tried only when the one before missed the root cause in
                    its top 3 (feedback "wrong"): Accuracy@3,i
    feedback        (off by default) the root causes confirmed for the cases replayed
                    before, written as the API writes a user's feedback, each at its own
                    alert time: what a platform's plans read once its users have confirmed
                    causes (the history prior). The only way a label reaches a plan here.

The writer's clock is the replayed time, so first/last seen and Stale cut-offs are those
of the incident. Every method then gets the same inputs, read back from the same source
(`observe`): the series of every service in the plan's windows, the call graph Tempo saw,
and the releases known at the alert.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from stackgraph.config import Settings
from stackgraph.ingest import GraphIngestor, run_lanes
from stackgraph.rca import Alert, Plan, Planner
from stackgraph.rca.model import EDGE_PREFIX, MetricsSource
from stackgraph.rca.outcome import (
    IncidentOutcome,
    OutcomeWriter,
    feedback_records,
    outcome_records,
)
from stackgraph.rca.programs import Engine, Operator, Run, playbook
from stackgraph.rca.programs.attempts import AttemptRecord, escalate, with_operator
from stackgraph.rca.programs.model_stages import ModelClient
from stackgraph.rca.programs.stages import TOP, Attempt
from stackgraph.rca.programs.synthesis import Check, CustomLibrary
from stackgraph.rca.sources import PrometheusMetrics
from stackgraph.schema import RecordBatch
from stackgraph.store import GraphStore

from .alerting import AlertTime, detect_alert
from .datasets.model import CallEdge, Case, MetricSeries
from .lane_files import catalog_doc, helm_releases, inventory, write_yaml

__all__ = ["LANE_EVERY_S", "Replay", "Replayer", "case_alert", "confirmed", "observe"]

LANE_EVERY_S = 300.0
"""The telemetry lane's cadence in the replay: once per window of its own (5 min), so each
run sees fresh traffic and an edge silent for 15 min turns Stale, as it would live."""


def case_alert(case: Case, fired: AlertTime) -> Alert:
    """What Alertmanager would send: the symptom service, firing since `fired`."""
    fp = hashlib.sha256(f"{case.dataset}:{case.case_id}".encode()).hexdigest()[:16]
    name = {"errors": "HighErrorRate", "latency": "HighLatency"}.get(fired.signal or "", "Down")
    return Alert(
        labels={"alertname": name, "service": case.symptom_service, "severity": "critical"},
        annotations={"summary": f"{case.symptom_service} is degraded"},
        starts_at=fired.fired_at,
        fingerprint=fp,
    )


def clock(t: float) -> Callable[[], float]:
    """A writer's clock stopped at `t`: what is written then was first seen then."""
    return lambda: t


def confirmed(case: Case, alert: Alert, at: float, label: str = "Service") -> RecordBatch:
    """The incident of `case` as the API writes it, with a user's feedback confirming its
    labelled root cause (a node of `label`): the Incident, the service it affects and its
    Active ROOT_CAUSED_BY."""
    root = case.root_cause
    outcome = IncidentOutcome(str(alert.fingerprint), alert, case.symptom_service, at,
                              feedback="confirmed", confirmed_root_cause=root)  # fmt: skip
    batch = outcome_records(outcome)
    batch.extend(feedback_records(outcome, "confirmed", root, label))
    return batch


def observe(source: MetricsSource, case: Case, plan: Plan, at: float) -> Case:
    """The case as every method sees it: each service's series from `source` over the
    plan's baseline and alert windows, the callers the source knows, the releases known at
    `at`. The labelled fault start is replaced by the alert window's start."""
    window = plan.window or (at - 600.0, at)
    base = plan.baseline or (window[0] - 1200.0, window[0])
    metrics: list[MetricSeries] = []
    edges: set[tuple[str, str]] = set()
    for service in case.services:
        for kind in source.kinds(service, base[0], window[1]):
            group, _, name = kind.partition("/")
            if name.startswith(EDGE_PREFIX):
                edges.add((name[len(EDGE_PREFIX) :], service))
            points = [p for p in source.points(service, kind, base[0], base[1]) if p[0] < base[1]]
            points += list(source.points(service, kind, max(window[0], base[1]), window[1]))
            if points:
                t, v = np.array(points, dtype=float).T
                metrics.append(MetricSeries(service, kind, group, t, v))
    calls = tuple(CallEdge(c, s) for c, s in sorted(edges) if c in case.services)
    return replace(
        case,
        inject_time=window[0],
        alert_window=(window[0], window[1]),
        baseline_window=base,
        call_edges=calls,
        metrics=tuple(metrics),
        changes=tuple(c for c in case.changes if c.at <= at),
    )


def admission_checks(
    engine: Engine, case: Case, replayed: list[tuple[Engine, Case]]
) -> tuple[Check, Check]:
    """Stage 3's admission on replay: the operator must put this case's root cause in the
    top 3 of the default program with it, and must not lower AC@1 over the cases replayed
    so far (each re-ranked from its engine's cache, the operator the only new part)."""
    default = playbook("default")

    def top(e: Engine, op: Operator | None, k: int) -> list[str]:
        if op is not None:
            e.library = {**e.library, op.name: op}
        run = e.run(with_operator(default, op.name) if op is not None else default)
        return [c.service for c in run.answer.candidates[:k]]

    def resolves(op: Operator) -> tuple[bool, dict[str, Any]]:
        got = top(engine, op, 3)
        return case.root_cause in got, {"case": case.case_id, "top": got}

    def no_regression(op: Operator) -> tuple[bool, dict[str, Any]]:
        before = sum(top(e, None, 1) == [c.root_cause] for e, c in replayed)
        after = sum(top(e, op, 1) == [c.root_cause] for e, c in replayed)
        return after >= before, {"cases": len(replayed), "ac1_before": before, "ac1_after": after}

    return resolves, no_regression


@dataclass
class Replay:
    """One case's outcome: StackGraph's ranking, the plan, and what every method saw."""

    case: Case
    ranking: list[str]
    plan: Plan
    alert: AlertTime
    observed: Case
    seconds: dict[str, float]
    notes: list[str] = field(default_factory=list)
    attempts: list[AttemptRecord] = field(default_factory=list)
    investigation: Any = None
    """The plan's `Investigation` (its engine and cache), for what replays it again."""

    @property
    def failed_open(self) -> bool:
        return not self.plan.candidates


@dataclass
class Replayer:
    """Replays cases against one Prometheus, one graph key per case (deleted after)."""

    store: GraphStore
    settings: Settings
    """Settings with `prometheus_url` pointing at the server holding the dataset."""
    manifests_root: Path | None = None
    keep_graphs: bool = False
    attempts: int = 3
    """Attempts per case for Accuracy@3,i (stages 1-3); 0: none."""
    planner: Planner = field(init=False)
    metrics: PrometheusMetrics = field(init=False)
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    """Part of every case's graph key, so two replays on one server never meet."""
    feedback: bool = False
    """Carry the root causes confirmed for earlier cases into each case's graph."""
    confirmed: list[tuple[float, RecordBatch]] = field(default_factory=list)
    """(alert time, the confirmed incident) of every case replayed so far, with feedback."""
    world: Callable[[GraphStore, Case, float, Path], list[str]] | None = None
    """What writes a case's world into its graph in place of `lanes` (same arguments and
    notes): the end-to-end replay's, with its Git monorepo (`e2e.world.build_world`)."""

    def __post_init__(self) -> None:
        self.metrics = PrometheusMetrics.from_settings(self.settings)
        self.planner = Planner.from_settings(self.settings)
        host = self.settings.ollama_host
        self.model = ModelClient(host, self.settings.agent_model) if host else None
        self.custom = CustomLibrary()
        self._replayed: list[tuple[Engine, Case]] = []

    def close(self) -> None:
        self.metrics.close()

    def lanes(self, graph: GraphStore, case: Case, at: float, folder: Path) -> list[str]:
        """Write the case's world through the lanes into `graph`, as known at `at` (the
        alert), with files in `folder`; returns notes on lanes that failed."""
        settings, failures = self.settings, []
        start = case.baseline_window[0]
        if case.criticality:
            catalog = write_yaml(folder / "catalog.yaml", catalog_doc(case.criticality))
            failures += run_lanes(graph, settings, "catalog", catalog=catalog,
                                  clock=clock(start), who="eval")[1]  # fmt: skip
        manifests = (self.manifests_root / case.manifests
                     if case.manifests and self.manifests_root is not None
                     else write_yaml(folder / "inventory" / "workloads.yaml",
                                     inventory(case.services)).parent)  # fmt: skip
        failures += run_lanes(graph, settings, "infra", manifests=manifests,
                              clock=clock(start), who="eval")[1]  # fmt: skip
        released = [c for c in case.changes if c.at <= at]
        if released:
            dump = write_yaml(folder / "flux" / "helmreleases.yaml", helm_releases(released))
            failures += run_lanes(graph, settings, "change", manifests=dump.parent,
                                  clock=clock(start), who="eval")[1]  # fmt: skip
        recorded = (case.baseline_window, (case.inject_time, at))
        ticks = [
            float(t)
            for t in np.arange(at, start + LANE_EVERY_S - 1e-9, -LANE_EVERY_S)[::-1]
            if any(t - LANE_EVERY_S < end and t > begin for begin, end in recorded)
        ]
        for tick in ticks or [at]:
            failures += run_lanes(graph, settings, "telemetry", options={"at": float(tick)},
                                  clock=clock(float(tick)), who="eval")[1]  # fmt: skip
        return [f"lane failed: {exc}" for exc in failures]

    def run(self, case: Case, index: int) -> Replay:
        key = f"{self.store.graph_name}-eval-{self.run_id}-{index}"
        graph = GraphStore(self.store.conn, key, self.store.where)
        seconds: dict[str, Any] = {}
        try:
            t = time.perf_counter()
            fired = detect_alert(self.metrics, case.symptom_service, case.inject_time,
                                 case.alert_window[1], case.baseline_window,
                                 case.recorded_alert)  # fmt: skip
            seconds["alert"] = time.perf_counter() - t
            t = time.perf_counter()
            with tempfile.TemporaryDirectory(prefix="sg-eval-") as tmp:
                notes = (self.world or self.lanes)(graph, case, fired.fired_at, Path(tmp))
            if self.feedback and self.confirmed:
                with GraphIngestor(graph, who="eval") as writer:  # one lease for them all
                    for when, batch in self.confirmed:
                        writer.clock = clock(when)  # each incident first seen at its alert
                        writer.write(batch)
            seconds["lanes"] = time.perf_counter() - t
            t = time.perf_counter()
            alert = case_alert(case, fired)
            inv = self.planner.investigation(graph, alert, at=fired.fired_at,
                                             limit=len(case.services) + 10)  # fmt: skip
            plan, first = self.planner.first(inv)
            seconds["investigate"] = time.perf_counter() - t
            if self.feedback:  # as a user would, once the case is diagnosed
                label = OutcomeWriter(graph).topology_label(case.root_cause) or "Service"
                self.confirmed.append((fired.fired_at, confirmed(case, alert, fired.fired_at,
                                                                 label)))  # fmt: skip
            attempts = self._attempts(inv, alert, case, first) if plan.candidates else []
        finally:
            if not self.keep_graphs:
                with GraphIngestor(graph, who="eval") as writer:
                    writer.drop_graph()
        t = time.perf_counter()
        observed = observe(self.metrics, case, plan, fired.fired_at)
        seconds["observe"] = time.perf_counter() - t
        ranked = [c.service for c in plan.candidates if c.service in case.services]
        unranked = sorted(s for s in case.services if s not in ranked)
        if unranked and plan.candidates:
            notes.append(f"{len(unranked)} service(s) outside the plan, appended by name")
        return Replay(case, ranked + unranked, plan, fired, observed, seconds, notes, attempts,
                      inv)  # fmt: skip

    def _attempts(self, inv: Any, alert: Alert, case: Case, first: Attempt) -> list[AttemptRecord]:
        """The plan's attempt (`first`), then stages 2-3 on its engine while feedback (the
        label) says its top 3 missed the root cause.
        With a model, stage 3's admission replays this case and every case replayed so far
        (their engines are kept for it, cache and all: memory grows with the dataset)."""
        engine = inv.engine()
        if self.attempts <= 0 or isinstance(engine, str):
            return []
        admission = None
        if self.model is not None:
            self._replayed.append((engine, case))
            admission = admission_checks(engine, case, self._replayed)

        def missed(step: Attempt, run: Run) -> bool:
            return case.root_cause not in [c.service for c in run.answer.candidates[:TOP]]

        return escalate(engine, alert, first, missed, self.attempts, self.model, self.custom,
                        admission)  # fmt: skip
