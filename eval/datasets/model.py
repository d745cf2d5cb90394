"""Neutral, in-memory representation of one labelled incident.

Every dataset adapter produces these objects so that evaluation code (baselines, StackGraph's
own RCA) never depends on a dataset's file layout. All objects are frozen and hold only
plain values and numpy arrays; nothing here touches the disk.

Windows are half-open intervals ``[start, end)`` in epoch seconds (UTC).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

METRIC_KINDS: frozenset[str] = frozenset(
    {"latency", "errors", "cpu", "memory", "workload", "network", "other"}
)


class DatasetError(Exception):
    """A dataset folder is missing, incomplete or malformed (the message names path and item)."""


@dataclass(frozen=True)
class CallEdge:
    """One client->server dependency with statistics over the case's alert window."""

    client: str
    server: str
    trace_count: float  # requests in the window, or a relative workload proxy if unknown
    error_rate: float  # fraction in [0, 1]; 0.0 when the dataset has no error signal
    latency_p95_ms: float | None


@dataclass(frozen=True)
class MetricSeries:
    """One metric of one service, aggregated over its pods."""

    service: str
    name: str  # the dataset's own column name, e.g. "CpuUsageRate(%)"
    kind: str  # one of METRIC_KINDS
    times: np.ndarray  # epoch seconds, ascending, float64
    values: np.ndarray  # float64, same length as times


@dataclass(frozen=True)
class ChangeEvent:
    """A release/deploy of a service."""

    service: str
    version: str
    at: float  # epoch s


@dataclass(frozen=True)
class Case:
    """A labelled incident: telemetry around one fault plus its ground truth."""

    dataset: str
    case_id: str
    fault_type: str
    root_cause: str  # the labelled root-cause service
    inject_time: float  # epoch s (UTC)
    alert_window: tuple[float, float]  # [inject_time, end), end <= next case's inject_time
    baseline_window: tuple[float, float]  # [start, end<=inject_time), avoids previous fault
    symptom_service: str  # the entry service the alert fires on, chosen without the label
    services: tuple[str, ...]
    call_edges: tuple[CallEdge, ...]
    metrics: tuple[MetricSeries, ...]  # over [baseline_window[0], alert_window[1])
    changes: tuple[ChangeEvent, ...]  # releases known before alert_window[1]
    manifests: str | None  # folder name in datasets/manifests, e.g. "online-boutique"
