"""Neutral, in-memory representation of one labelled incident: what a Kubernetes platform's
exporters would have published around one fault, plus its ground truth.

Every dataset adapter produces these objects, so the replay never depends on a dataset's
file layout. Telemetry is stated in the exporters' own terms, so that the replay can write
it into Prometheus the way a platform would hold it, and the read path can read it back
with the queries it uses live:

    per service, from its pods (cAdvisor, kube-state-metrics)      POD_SIGNALS
    per service, as it reports itself (its HTTP server metrics)     SERVICE_SIGNALS
    per call edge client -> server (Tempo's service graph)          EDGE_SIGNALS

A dataset column with no such meaning is left out: what no exporter publishes, no method
gets to see. All objects are frozen and hold only plain values and numpy arrays. Windows
are half-open intervals ``[start, end)`` in epoch seconds (UTC).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from stackgraph.errors import InputError
from stackgraph.ingest.lanes.telemetry import Span

METRIC_KINDS: frozenset[str] = frozenset(
    {"latency", "errors", "cpu", "memory", "workload", "network", "other"}
)

POD_SIGNALS: Mapping[str, str] = {
    "cpu": "CPU cores in use",
    "memory": "working-set bytes",
    "network_rx": "bytes received per second",
    "network_tx": "bytes sent per second",
    "restarts": "container restarts so far (a counter)",
}
SERVICE_SIGNALS: Mapping[str, str] = {
    "errors": "share of the requests it answered with an error, as the service reports it, 0..1",
}
"""A service's own error ratio, with no client: where a dataset measured a service's errors
(Nezha's `front_service.csv`) but not its calls' failures. Tempo records a call's failure
from its span's status, so an edge series would say the service's spans carry one, and with
that, that every call below it succeeded: a measurement the dataset does not hold."""
EDGE_SIGNALS: Mapping[str, str] = {
    "requests": "requests per second",
    "errors": "share of the requests that failed, 0..1",
    "latency_server": "p95 in seconds, measured at the callee",
    "latency_client": "p95 in seconds, measured at the caller (network included)",
}
SIGNAL_KIND: Mapping[str, str] = {
    "cpu": "cpu",
    "memory": "memory",
    "network_rx": "network",
    "network_tx": "network",
    "restarts": "errors",
    "requests": "workload",
    "errors": "errors",
    "latency_server": "latency",
    "latency_client": "latency",
}
USER = "user"
"""The caller of an entry service: Tempo's name for an uninstrumented client."""


class DatasetError(InputError):
    """A dataset folder is missing, incomplete or malformed (the message names path and item)."""


@dataclass(frozen=True)
class CallEdge:
    """One client -> server dependency of the system's call graph."""

    client: str
    server: str


@dataclass(frozen=True)
class MetricSeries:
    """One signal of one service (or of one call edge into it), at the data's resolution:
    a value at ``t`` covers the interval of one step ending at ``t``.

    From an adapter, ``name`` is a POD_SIGNALS, SERVICE_SIGNALS (no client) or EDGE_SIGNALS
    (a client) key; read back from a
    metrics source for the baselines, it is the source's kind (``latency/from:web``)."""

    service: str  # the pods' service, or an edge's server (callee)
    name: str
    kind: str  # one of METRIC_KINDS
    times: np.ndarray  # epoch seconds, ascending, float64
    values: np.ndarray  # float64, same length as times
    client: str | None = None  # the caller, for an edge series
    spread: bool = False
    """The client was not measured: a service-level signal divided over the callers the
    dataset's call graph states (`_common.spread_to_callers`)."""


def series(
    service: str, name: str, times: np.ndarray, values: np.ndarray, client: str | None = None
) -> MetricSeries:
    """A signal series (its kind from SIGNAL_KIND); non-finite points dropped, sorted."""
    if name not in SIGNAL_KIND:
        raise DatasetError(f"unknown signal {name!r}; known: {', '.join(SIGNAL_KIND)}")
    t = np.asarray(times, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    ok = np.isfinite(t) & np.isfinite(v)
    order = np.argsort(t[ok], kind="stable")
    return MetricSeries(service, name, SIGNAL_KIND[name], t[ok][order], v[ok][order], client)


@dataclass(frozen=True)
class LogRecord:
    """One log line of a service's pods, as Loki would hold it."""

    t: float  # epoch s
    service: str
    line: str
    trace_id: str = ""
    span_id: str = ""


@dataclass(frozen=True)
class ChangeEvent:
    """A release/deploy of a service."""

    service: str
    version: str
    at: float  # epoch s


@dataclass(frozen=True)
class Case:
    """A labelled incident: telemetry around one fault plus its ground truth.

    ``inject_time`` (the labelled fault start) and ``alert_window[1]`` (the next fault, or
    the end of the data) only bound the replay: the alert is looked for between them, and
    no window reaches past them. Where the alert fires is found in the data.
    """

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
    timeline: str = ""
    """Cases on one timeline are cut from one recording and share its series; cases on
    different timelines are separate recordings (the replay keeps them apart in time)."""
    criticality: Mapping[str, str] = field(default_factory=dict)
    """Catalog criticality per service, where the dataset states one."""
    recorded_alert: float | None = None
    """When the experiment's own alerting fired (epoch s), where the dataset recorded it:
    the replay's alert time when the symptom's series show nothing it can detect."""
    logs: tuple[LogRecord, ...] = ()
    """Log lines over [baseline_window[0], alert_window[1]), where the dataset has them."""
    spans: tuple[Span, ...] = ()
    """Spans that ended in [baseline_window[0], alert_window[1]), where the dataset has them."""
