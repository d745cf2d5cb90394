"""Prometheus metrics of one app instance (its own registry, so tests stay independent)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


class ApiMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.alerts_received = Counter(
            "stackgraph_alerts_received", "Alerts received by the webhook.", ["status"],
            registry=self.registry,
        )  # fmt: skip
        self.alerts_rejected = Counter(
            "stackgraph_alerts_rejected", "Alerts answered 503 because the job queue was full.",
            registry=self.registry,
        )  # fmt: skip
        self.investigations = Counter(
            "stackgraph_investigations", "Investigations finished, by ending.", ["ending"],
            registry=self.registry,
        )  # fmt: skip
        self.duration = Histogram(
            "stackgraph_investigation_duration_seconds", "Wall-clock time of an investigation.",
            buckets=(0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600), registry=self.registry,
        )  # fmt: skip
        self.queue_depth = Gauge(
            "stackgraph_queue_depth", "Jobs in the durable job stream (waiting or at work).",
            registry=self.registry,
        )  # fmt: skip
        self.incidents_grouped = Counter(
            "stackgraph_incidents_grouped",
            "Incidents that joined another after planning (same cause or one path).",
            registry=self.registry,
        )  # fmt: skip
        self.audits = Counter(
            "stackgraph_audits", "Investigation audits, by route (pass, fast, slow).", ["route"],
            registry=self.registry,
        )  # fmt: skip
        self.escalations = Counter(
            "stackgraph_escalations",
            "Incidents whose plan's leads were all refuted and that got a plan from a new "
            "program (rca.programs stage 2).",
            registry=self.registry,
        )  # fmt: skip
        self.proposals = Counter(
            "stackgraph_knowledge_proposals",
            "Knowledge proposals judged by `evolve`, by verdict (admitted, rejected_inner, "
            "rejected_outer).",
            ["verdict"], registry=self.registry,
        )  # fmt: skip
        self.trajectory_failures = Counter(
            "stackgraph_trajectory_failures",
            "Trajectories (investigations as learning material) that could not be written.",
            registry=self.registry,
        )  # fmt: skip
        self.writeback_failures = Counter(
            "stackgraph_writeback_failures", "Write-backs that failed.", registry=self.registry
        )
        self.memory_failures = Counter(
            "stackgraph_memory_failures",
            "Incident-memory operations that failed (open, record, supersede, search).",
            ["op"], registry=self.registry,
        )  # fmt: skip

    def count_evolution(self, report: Mapping[str, Any]) -> None:
        """An evolve run's verdicts, into `stackgraph_knowledge_proposals_total`."""
        for verdict in ("admitted", "rejected_inner", "rejected_outer"):
            self.proposals.labels(verdict).inc(int(report.get(verdict, 0)))
