"""Labelled cases as OpenMetrics text, the way a platform's exporters would have left them in
Prometheus, so the replay reads them back through the product's own PromQL.

Pure: cases in, text out (`promserver` backfills it with promtool and serves it). Per
service, its pod's cAdvisor and kube-state-metrics series; per call edge, Tempo's
service-graph series; the names are those `stackgraph.rca.sources` queries:

    cpu (cores)             container_cpu_usage_seconds_total{namespace,pod,container}  += v*15
    memory (bytes)          container_memory_working_set_bytes{namespace,pod,container}
    network_rx/tx (B/s)     container_network_{receive,transmit}_bytes_total{...,interface}  += v*15
    restarts (cumulative)   kube_pod_container_status_restarts_total{namespace,pod,container}
    requests (req/s)        <requests>{client,server}          += v*15 (1 req/s if absent,
                            also on a call edge of the case that has no series at all)
    errors (ratio)          <failed>{client,server}            += ratio * requests
    a service's own errors  service_request_error_ratio{service}  (SERVICE_SIGNALS; a gauge,
                            as a recording rule holds it; no Tempo failed counter)
    latency_server/_client  <server_seconds>/<client_seconds>_bucket{client,server,le}

Every series is resampled onto 15 s ticks (`STEP_S`, epoch multiples): a native point at
``t`` covers one native step ending at ``t``; a tick without a covering point has no sample
(a gap). Latency histograms get, per tick, bucket increments whose
``histogram_quantile(0.95, ...)`` is exactly the dataset's p95 (`p95_fractions`). What no
exporter publishes is not written: the case model holds only exporter signals.

Cases on one timeline are cut from one recording: their series are merged (first wins
per timestamp). `place` first lays separate recordings end to end in time.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TextIO

import numpy as np
import numpy.typing as npt

from stackgraph.promql import PromQLNames
from stackgraph.rca.agent.toolbox import LOOKBACK_S
from stackgraph.rca.sources.prometheus import TEMPLATES as READ_PATH

from .datasets.model import (
    EDGE_SIGNALS,
    POD_SIGNALS,
    SERVICE_SIGNALS,
    Case,
    DatasetError,
    MetricSeries,
)
from .datasets.model import series as signal_series

__all__ = [
    "BUCKETS",
    "STEP_S",
    "WriteStats",
    "p95_fractions",
    "place",
    "pod_name",
    "resample",
    "shifted",
    "write_openmetrics",
]

STEP_S = 15.0
"""Sampling interval of the written series (a common scrape interval)."""
BUCKETS: tuple[float, ...] = tuple(0.0001 * 4**k for k in range(10))
"""Latency histogram bounds in seconds (0.1 ms .. 26 s); a +Inf bucket follows."""
QUANTILE = 0.95
MARGIN_S = LOOKBACK_S + 900.0
"""Gap between two recordings laid end to end, so that no query about one reaches the
other: beyond the furthest an agent's check reads before the alert (`LOOKBACK_S`, 2 h), and
Prometheus' 5-minute lookback and the telemetry lane's 5-minute window after it."""
SINGLE_POINT_STEP_S = 60.0

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


def pod_name(service: str) -> str:
    """A Deployment-like pod name for `service`, stable across runs:
    ``<service>-<10 hex: template hash>-<5 hex>``."""
    template = hashlib.sha1(service.encode()).hexdigest()[:10]
    suffix = hashlib.sha1(f"{service}/pod".encode()).hexdigest()[:5]
    return f"{service}-{template}-{suffix}"


# --- placing recordings in time -------------------------------------------------------------


def shifted(case: Case, dt: float) -> Case:
    """`case` with every time in it moved by `dt` seconds."""
    if dt == 0:
        return case
    return replace(
        case,
        inject_time=case.inject_time + dt,
        alert_window=(case.alert_window[0] + dt, case.alert_window[1] + dt),
        baseline_window=(case.baseline_window[0] + dt, case.baseline_window[1] + dt),
        metrics=tuple(replace(m, times=m.times + dt) for m in case.metrics),
        changes=tuple(replace(c, at=c.at + dt) for c in case.changes),
        recorded_alert=None if case.recorded_alert is None else case.recorded_alert + dt,
        logs=tuple(replace(r, t=r.t + dt) for r in case.logs),
        spans=tuple(replace(s, end_s=s.end_s + dt) for s in case.spans),
    )


def _timeline(case: Case) -> str:
    return case.timeline or case.case_id


def _span(case: Case) -> tuple[float, float]:
    starts = [case.baseline_window[0], *(float(m.times[0]) for m in case.metrics if len(m.times))]
    ends = [case.alert_window[1], *(float(m.times[-1]) for m in case.metrics if len(m.times))]
    return min(starts), max(ends)


def place(cases: Sequence[Case]) -> list[Case]:
    """The cases with separate recordings laid end to end: sorted by start, each timeline
    after the first is moved (by whole minutes) to begin MARGIN_S after the previous one
    ends. No method reads the date, and a TSDB spanning days, not weeks, backfills in
    seconds. Same order as given; cases on one timeline move together."""
    spans: dict[str, tuple[float, float]] = {}
    for case in cases:
        start, end = _span(case)
        key = _timeline(case)
        old = spans.get(key)
        spans[key] = (start, end) if old is None else (min(old[0], start), max(old[1], end))
    shift: dict[str, float] = {}
    kept_end: float | None = None
    for key in sorted(spans, key=lambda k: spans[k][0]):  # stable: ties keep the input order
        start, end = spans[key]
        moved = 0.0 if kept_end is None else math.ceil((kept_end + MARGIN_S - start) / 60) * 60
        shift[key] = moved
        kept_end = end + moved
    return [shifted(case, shift[_timeline(case)]) for case in cases]


# --- resampling -------------------------------------------------------------------------------


def resample(times: Floats, values: Floats) -> tuple[Ints, Floats]:
    """(tick epoch seconds, value) of one series on the ticks `k * STEP_S`.

    A native point (t, v) covers (t - step, t], step being the median spacing of `times`
    (60 s for a single point). A coarser series gives a tick the value of the first point
    at or after it that covers it; a finer one gives a tick the mean of the points in
    (tick - STEP_S, tick]. Ticks no point reaches are left out. `times` ascending, unique."""
    t = np.asarray(times, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    step_s, step_i = STEP_S, int(STEP_S)
    if not len(t):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    native = float(np.median(np.diff(t))) if len(t) > 1 else SINGLE_POINT_STEP_S
    if native >= step_s:
        k = np.arange(
            math.floor((t[0] - native) / step_s) + 1, math.floor(t[-1] / step_s) + 1
        ).astype(np.int64)
        tau = k.astype(np.float64) * step_s
        idx = np.searchsorted(t, tau, side="left")
        ok = t[idx] - native < tau  # idx < len(t): every tau <= t[-1]
        return k[ok] * step_i, v[idx[ok]]
    k_all = np.ceil(t / step_s).astype(np.int64)
    k, inverse = np.unique(k_all, return_inverse=True)
    means = np.bincount(inverse, weights=v) / np.bincount(inverse)
    return k * step_i, means


# --- the exact-p95 histogram ------------------------------------------------------------------


def p95_fractions(p95_s: Floats) -> Floats:
    """Per value, the share of one tick's requests in each histogram bucket (columns: the
    buckets ending at BUCKETS, then +Inf) such that Prometheus' `histogram_quantile(0.95)`
    of those increments is the value.

    Prometheus interpolates linearly inside the bucket (lo, hi] holding rank 0.95·n (lo of
    the first bucket is 0). With r = (v - lo) / (hi - lo): if r <= 0.95, a share
    f = (0.95 - r) / (1 - r) goes at or below lo and the rest into (lo, hi]; otherwise a
    share g = 1 - 0.95 / r goes above hi and the rest into (lo, hi]. Either way the rank
    falls at r of the bucket. Values below 0.95·BUCKETS[0] (the first bucket has nothing
    below it) or above BUCKETS[-1] are clamped to those."""
    bounds = np.asarray(BUCKETS, dtype=np.float64)
    v = np.clip(np.asarray(p95_s, dtype=np.float64), QUANTILE * bounds[0], bounds[-1])
    b = np.searchsorted(bounds, v, side="left")  # lo < v <= hi = bounds[b]
    lo = np.where(b > 0, bounds[np.maximum(b - 1, 0)], 0.0)
    hi = bounds[b]
    r = (v - lo) / (hi - lo)
    below = (r <= QUANTILE) & (b > 0)
    f = np.where(below, (QUANTILE - r) / np.where(below, 1.0 - r, 1.0), 0.0)
    g = np.where(below, 0.0, np.maximum(0.0, 1.0 - QUANTILE / r))
    rows = np.arange(len(v))
    out = np.zeros((len(v), len(bounds) + 1), dtype=np.float64)
    out[rows, b] = 1.0 - f - g
    np.add.at(out, (rows, np.maximum(b - 1, 0)), f)  # f is 0 where b == 0
    np.add.at(out, (rows, b + 1), g)
    return out


# --- writing ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class WriteStats:
    """What `write_openmetrics` wrote: series, samples and the [start, end] tick range."""

    series: int
    samples: int
    start: float
    end: float


_Key = tuple[str, str | None, str]
"""(service or server, client or None, signal name)."""
_Resampled = tuple[Ints, Floats]

_POD_FAMILIES = {
    # signal: (sample name, type)
    "cpu": ("container_cpu_usage_seconds_total", "counter"),
    "memory": ("container_memory_working_set_bytes", "gauge"),
    "network_rx": ("container_network_receive_bytes_total", "counter"),
    "network_tx": ("container_network_transmit_bytes_total", "counter"),
    "restarts": ("kube_pod_container_status_restarts_total", "counter"),
}
SERVICE_ERRORS = "service_request_error_ratio"
"""A service's own error ratio (`SERVICE_SIGNALS`), labelled `service`: as a recording rule
over its HTTP server metrics would hold it. The read path reads it through the `errors`
kind's replacement (`SERVICE_ERRORS_PROMQL`), Tempo's failed calls where it has none."""
SERVICE_ERRORS_PROMQL = (
    f"max(avg_over_time({SERVICE_ERRORS}{{service=<<service>>}}[<<window>>])) or "
    f"({READ_PATH.load('errors')})"
)
_RATES = {"cpu", "network_rx", "network_tx"}
"""Pod signals stated per second and written as counters of v * STEP_S per tick."""


def _traffic(case: Case) -> list[MetricSeries]:
    """1 req/s on each call edge the case names but has no series of, over the times its
    other series cover: the edge carried calls, so Tempo would have seen it."""
    measured = {(m.client, m.service) for m in case.metrics if m.client is not None}
    quiet = [e for e in case.call_edges if (e.client, e.server) not in measured]
    if not quiet or not case.metrics:
        return []
    times = np.unique(np.concatenate([m.times for m in case.metrics]))
    return [
        signal_series(e.server, "requests", times, np.ones(times.size), e.client) for e in quiet
    ]


def _merged(cases: Iterable[Case]) -> dict[_Key, _Resampled]:
    by_timeline: dict[_Key, dict[str, list[MetricSeries]]] = {}
    for case in cases:
        for m in (*case.metrics, *_traffic(case)):
            if m.name in POD_SIGNALS:
                if m.client is not None:
                    raise DatasetError(f"{case.case_id}: pod signal {m.name!r} with a client")
            elif m.name in SERVICE_SIGNALS and m.client is None:
                pass  # the service's own report (`SERVICE_ERRORS`)
            elif m.name in EDGE_SIGNALS:
                if m.client is None:
                    raise DatasetError(f"{case.case_id}: edge signal {m.name!r} has no client")
            else:
                raise DatasetError(f"{case.case_id}: {m.name!r} is no exporter signal")
            key = (m.service, m.client, m.name)
            by_timeline.setdefault(key, {}).setdefault(_timeline(case), []).append(m)
    out: dict[_Key, _Resampled] = {}
    for key, timelines in by_timeline.items():
        parts = [_union(ms) for ms in timelines.values()]
        ticks = np.concatenate([p[0] for p in parts])
        values = np.concatenate([p[1] for p in parts])
        ticks, first = np.unique(ticks, return_index=True)  # first timeline wins a tick
        out[key] = ticks, values[first]
    return out


def _union(series: list[MetricSeries]) -> _Resampled:
    """One recording's series of one signal, its cases' points united (first wins), resampled."""
    times = np.concatenate([m.times for m in series]).astype(np.float64)
    values = np.concatenate([m.values for m in series]).astype(np.float64)
    times, first = np.unique(times, return_index=True)
    return resample(times, values[first])


def _esc(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _type_name(sample_name: str, mtype: str) -> tuple[str, str]:
    """(TYPE line name, type): counters' family names are without `_total`."""
    if mtype == "counter":
        if sample_name.endswith("_total"):
            return sample_name[: -len("_total")], "counter"
        return sample_name, "unknown"
    return sample_name, mtype


def _at(ticks: Ints, of_ticks: Ints, values: Floats) -> Floats:
    """`values` (on `of_ticks`) at each of `ticks`, 0 where there is none."""
    if not len(of_ticks):
        return np.zeros(len(ticks), dtype=np.float64)
    idx = np.minimum(np.searchsorted(of_ticks, ticks), len(of_ticks) - 1)
    return np.where(of_ticks[idx] == ticks, values[idx], 0.0)


class _Out:
    def __init__(self) -> None:
        self.families: dict[str, tuple[str, list[str]]] = {}
        self.series = 0
        self.samples = 0
        self.start = math.inf
        self.end = -math.inf

    def add(
        self,
        sample_name: str,
        mtype: str,
        labels: str,
        ticks: Ints,
        values: Floats,
        family: str | None = None,
    ) -> None:
        if not len(ticks):
            return
        family, ftype = (family, mtype) if family else _type_name(sample_name, mtype)
        chunks = self.families.setdefault(family, (ftype, []))[1]
        prefix = f"{sample_name}{{{labels}}} "
        chunks.append(
            "".join(
                [
                    f"{prefix}{v!r} {t}\n"
                    for t, v in zip(ticks.tolist(), values.tolist(), strict=True)
                ]
            )
        )
        self.series += 1
        self.samples += len(ticks)
        self.start = min(self.start, float(ticks[0]))
        self.end = max(self.end, float(ticks[-1]))

    def histogram(
        self, name: str, labels: str, ticks: Ints, p95_s: Floats, requests: Floats
    ) -> None:
        per_tick = p95_fractions(p95_s) * requests[:, None]
        counters = np.cumsum(np.cumsum(per_tick, axis=1), axis=0)
        les = [repr(b) for b in BUCKETS] + ["+Inf"]
        for i, le in enumerate(les):
            bucket = f'{labels},le="{le}"'
            self.add(f"{name}_bucket", "histogram", bucket, ticks, counters[:, i], family=name)


def write_openmetrics(
    cases: Iterable[Case],
    out: TextIO,
    names: PromQLNames = PromQLNames(),  # noqa: B008 (frozen, validated once)
    namespace: str = "default",
) -> WriteStats:
    """Write the cases' telemetry to `out` as OpenMetrics (seconds timestamps, one `# TYPE`
    per family, each series ascending, `# EOF`), for `promtool tsdb create-blocks-from
    openmetrics`. Cases should be `place`d first when separate recordings share times."""
    series = _merged(cases)
    w = _Out()
    ns = _esc(namespace)
    step = STEP_S
    for service, client, name in sorted(k for k in series if k[1] is None):
        ticks, v = series[(service, client, name)]
        if name in SERVICE_SIGNALS:
            w.add(SERVICE_ERRORS, "gauge", f'service="{_esc(service)}"', ticks, v)
            continue
        sample_name, mtype = _POD_FAMILIES[name]
        pod, svc = _esc(pod_name(service)), _esc(service)
        if name.startswith("network"):
            labels = f'namespace="{ns}",pod="{pod}",interface="eth0"'
        else:
            labels = f'namespace="{ns}",pod="{pod}",container="{svc}"'
        if name in _RATES:
            v = np.cumsum(np.maximum(v, 0.0) * step)
        w.add(sample_name, mtype, labels, ticks, v)

    edges = sorted({(k[1], k[0]) for k in series if k[1] is not None})
    for client, server in edges:
        labels = f'client="{_esc(client)}",server="{_esc(server)}"'
        own = {k[2]: series[k] for k in series if k[1] == client and k[0] == server}
        if "requests" in own:
            req_ticks, rps = own["requests"]
            per_tick = np.maximum(rps, 0.0) * step
        else:  # Tempo counts what it saw; the dataset only says the edge carried calls
            req_ticks = np.unique(np.concatenate([t for t, _ in own.values()]))
            per_tick = np.full(len(req_ticks), step)
        w.add(names.requests, "counter", labels, req_ticks, np.cumsum(per_tick))
        if "errors" in own:
            ticks, ratio = own["errors"]
            failed = np.clip(ratio, 0.0, 1.0) * _at(ticks, req_ticks, per_tick)
            w.add(names.failed, "counter", labels, ticks, np.cumsum(failed))
        for signal, hist in (
            ("latency_server", names.server_seconds),
            ("latency_client", names.client_seconds),
        ):
            if signal in own:
                ticks, p95 = own[signal]
                w.histogram(hist, labels, ticks, p95, _at(ticks, req_ticks, per_tick))

    for family, (ftype, chunks) in w.families.items():
        out.write(f"# TYPE {family} {ftype}\n")
        for chunk in chunks:
            out.write(chunk)
    out.write("# EOF\n")
    if not w.series:
        return WriteStats(0, 0, 0.0, 0.0)
    return WriteStats(w.series, w.samples, w.start, w.end)
