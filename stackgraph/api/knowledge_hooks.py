"""Trajectories, wired into the incident service: every investigated incident is written
as a trajectory when it concludes, and again, labelled, when feedback comes (through the
writer, the lease taken per write). A failure is logged and counted
(`stackgraph_trajectory_failures_total`); it never fails the investigation or the feedback.
"""

from __future__ import annotations

import logging

from stackgraph.memory.knowledge import trajectory_records
from stackgraph.rca.outcome import IncidentOutcome, OutcomeWriter

from .metrics import ApiMetrics

log = logging.getLogger(__name__)


class TrajectoryRecorder:
    """`on_concluded` / `on_feedback` hooks of `IncidentService`; never raise."""

    def __init__(self, writer: OutcomeWriter, metrics: ApiMetrics) -> None:
        self.writer = writer
        self.metrics = metrics

    def __call__(self, outcome: IncidentOutcome) -> None:
        try:
            report = self.writer.write(trajectory_records(outcome))
            if report.rejected:
                raise ValueError(f"rejected: {report.rejected[:1]}")
        except Exception as exc:  # learning material is never worth a failed incident
            self.metrics.trajectory_failures.inc()
            log.error("trajectory of incident %s not written: %s: %s", outcome.fingerprint,
                      type(exc).__name__, exc)  # fmt: skip
