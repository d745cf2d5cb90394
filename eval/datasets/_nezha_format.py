"""The Nezha (FSE'23) data layout, shared by its Online Boutique and Train Ticket adapters.

``rca_data/<date>/<date>-fault_list.json`` names the faults (``inject_time`` read as UTC;
``inject_timestamp`` is unreliable, see SOURCE.md); ``rca_data/<date>/metric/`` holds one
``<pod>_metric.csv[.gz]`` per pod (a service's pods are summed), a row per minute stamped at
the minute's end (its ``Time`` string; the ``TimeStamp`` column is shifted on some days),
and ``front_service.csv``, the entry KPI.

Pod signals (checked on the data of both systems):

* ``cpu`` (cores) = ``CpuUsage(m)`` / 100. Despite its name the column is in tens of
  millicores (percent of one core): ``CpuUsage(m)`` / ``CpuUsageRate(%)`` equals the pod's
  CPU limit in cores in every row, and under cpu faults the column tops out at the limit.
* ``memory`` (bytes) = ``MemoryUsage(Mi)`` * 2**20.
* ``network_rx`` / ``network_tx`` (bytes/s) = ``NetworkReceiveBytes`` / ``NetworkTransmitBytes``
  as they are: per-second rates, on the same time base as ``PodWorkload(Ops)``.

Left out everywhere: a pod column that is 0 all day (nothing measured it);
``PodSuccessRate(%)`` (constant 0); ``CpuUsageRate(%)``,
``MemoryUsageRate(%)`` (duplicates relative to the limit); ``SyscallRead``/``SyscallWrite``
and the ``Node*`` columns (no per-service exporter meaning); the per-pod
``PodClient/ServerLatencyP90/95/99(s)`` (per pod, not per edge).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from stackgraph.ingest.lanes.telemetry import Span

from ._common import (
    alert_window,
    bad_cell,
    baseline_window,
    cut,
    neighbours,
    parse_go_time,
    parse_utc,
    read_csv,
    read_json,
    require_dir,
    spread_to_callers,
    to_float,
)
from .model import CallEdge, Case, DatasetError, LogRecord, MetricSeries, series

__all__ = [
    "Day",
    "Pods",
    "cases",
    "faults",
    "front_kpi",
    "hms",
    "pod_to_service",
    "read_pods",
    "read_table",
]

_POD_FILE = re.compile(r"^(?P<pod>.+)_metric\.csv(\.gz)?$")
_SKIP_COLS = {"Time", "TimeStamp", "PodName", "ServiceName"}
_POD_SIGNALS = {
    "CpuUsage(m)": ("cpu", 1.0 / 100.0),
    "MemoryUsage(Mi)": ("memory", float(2**20)),
    "NetworkReceiveBytes": ("network_rx", 1.0),
    "NetworkTransmitBytes": ("network_tx", 1.0),
}
"""pod column -> (signal, factor to the signal's unit)"""
WORKLOAD = "PodWorkload(Ops)"


def pod_to_service(pod: str) -> str:
    """``cartservice-6d9f8b7c5d-abcde`` -> ``cartservice`` (drop the last two segments)."""
    parts = pod.split("-")
    return "-".join(parts[:-2]) if len(parts) > 2 else pod


def read_table(path: Path, time_col: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    header, rows = read_csv(path)
    if time_col not in header:
        raise DatasetError(f"{path}: no {time_col!r} column")
    ti = header.index(time_col)
    times = np.empty(len(rows), dtype=np.float64)
    for n, r in enumerate(rows):
        try:
            times[n] = parse_go_time(r[ti])
        except (IndexError, ValueError) as exc:
            cell = r[ti] if ti < len(r) else "nothing"
            want = "a time like '2022-08-22 03:51:19.607 +0000 UTC'"
            raise bad_cell(path, n + 2, time_col, cell, want, exc) from exc
    cols: dict[str, np.ndarray] = {}
    for j, name in enumerate(header):
        if name in _SKIP_COLS or name.lower() in {"time", "timestamp"}:
            continue
        cols[name] = np.array([to_float(r[j]) if j < len(r) else np.nan for r in rows])
    return times, cols


def column(path: Path, cols: dict[str, np.ndarray], name: str) -> np.ndarray:
    if name not in cols:
        raise DatasetError(f"{path}: no {name!r} column")
    return cols[name]


@dataclass
class Pods:
    """One date's pod files: their signals, each service's workload, and the time span."""

    series: list[MetricSeries]
    workload: dict[str, tuple[np.ndarray, np.ndarray]]
    start: float
    end: float

    @property
    def services(self) -> tuple[str, ...]:
        return tuple(sorted(self.workload))


def read_pods(metric_dir: Path) -> Pods:
    """Every pod file of a date's ``metric/`` folder; a service with several (a pod replaced
    during the day, or scaled out) is their sum (`_summed`)."""
    files = sorted(p for p in metric_dir.iterdir() if _POD_FILE.match(p.name))
    if not files:
        raise DatasetError(f"{metric_dir}: no <pod>_metric.csv[.gz] files")
    by_service: dict[str, list[Path]] = {}
    for f in files:
        m = _POD_FILE.match(f.name)
        assert m is not None
        by_service.setdefault(pod_to_service(m.group("pod")), []).append(f)
    out: list[MetricSeries] = []
    workload: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for svc, pod_files in by_service.items():
        tables = []
        for f in pod_files:
            times, cols = read_table(f, "Time")
            tables.append((times, {c: column(f, cols, c) for c in (*_POD_SIGNALS, WORKLOAD)}))
        times, cols = tables[0] if len(tables) == 1 else _summed(tables)
        for col, (signal, factor) in _POD_SIGNALS.items():
            values = cols[col]
            if np.any(np.nan_to_num(values)):  # all zero all day: a pod nothing measured
                out.append(series(svc, signal, times, values * factor))
        workload[svc] = (times, cols[WORKLOAD])
    all_t = np.concatenate([t for t, _ in workload.values()])
    return Pods(out, workload, float(all_t.min()), float(all_t.max()) + 60.0)


def _summed(
    tables: list[tuple[np.ndarray, dict[str, np.ndarray]]],
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """A service's pods as one: per minute (each row stamps the minute's end; pods are
    scraped seconds apart), the sum over the pods that reported it. A service's cpu,
    memory, traffic and operations are its pods' totals; a minute no pod reported is a gap."""
    minute = [np.round(t / 60.0) * 60.0 for t, _ in tables]
    grid = np.unique(np.concatenate(minute))
    cols: dict[str, np.ndarray] = {}
    for name in tables[0][1]:
        total = np.zeros(len(grid))
        seen = np.zeros(len(grid), dtype=bool)
        for at, (_, table) in zip(minute, tables, strict=True):
            v = table[name]
            ok = np.isfinite(v)
            idx = np.searchsorted(grid, at[ok])
            np.add.at(total, idx, v[ok])
            seen[idx] = True
        cols[name] = np.where(seen, total, np.nan)
    return grid, cols


def faults(day_dir: Path) -> list[tuple[float, str, str, str]]:
    date = day_dir.name
    path = day_dir / f"{date}-fault_list.json"
    data = read_json(path)
    out = []
    try:
        for items in data.values():
            for it in items:
                out.append((parse_utc(it["inject_time"]), it["inject_pod"], it["inject_type"],
                            date))  # fmt: skip
    except (AttributeError, TypeError, KeyError, ValueError) as exc:
        raise DatasetError(
            f"{path}: expected {{group: [{{inject_time, inject_pod, "
            f"inject_type}}, ...]}} ({type(exc).__name__}: {exc})"
        ) from exc
    return out


def hms(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%H%M%S")


def front_kpi(metric_dir: Path, entry: str, edges: list[tuple[str, str]]) -> list[MetricSeries]:
    """``front_service.csv``, the entry's KPI: its p95 (s) on the calls into it, and its
    error share as the service's own report (`SERVICE_SIGNALS`: the data has no call's
    failures, which a Tempo series on the entry's calls would claim as well). A success
    rate that is 0 throughout the recording while requests flow is no measurement: left
    out."""
    path = metric_dir / "front_service.csv"
    times, cols = read_table(path, "Time")
    success = column(path, cols, "SuccessRate(%)")
    p95 = column(path, cols, "LatencyP95(s)")
    out = spread_to_callers(entry, edges, times, latency_server=p95, latency_client=p95)
    if np.any(np.nan_to_num(success)):
        out.append(series(entry, "errors", times, 1.0 - success / 100.0))
    return out


@dataclass
class Day:
    """One date's recording: every signal over the whole day, plus its call graph."""

    services: tuple[str, ...]
    edges: list[tuple[str, str]]
    entry: str
    series: list[MetricSeries]
    start: float
    end: float
    logs: list[LogRecord] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)


def cases(
    root: Path, dataset: str, manifests: str, load_day: Callable[[Path, str], Day]
) -> list[Case]:
    """Every case of a folder in the Nezha layout: one per labelled fault, each cut to its
    own windows (the shared rule in ``_common``); `load_day(root, date)` reads a date."""
    rca = require_dir(root / "rca_data", f"{dataset} dataset (expects rca_data/<date>/)")
    day_dirs = sorted(d for d in rca.iterdir() if d.is_dir() and (d / "metric").is_dir())
    if not day_dirs:
        raise DatasetError(f"{rca}: no <date>/metric/ folders")
    days = {d.name: load_day(root, d.name) for d in day_dirs}
    found = sorted(f for d in day_dirs for f in faults(d))
    nb = neighbours([f[0] for f in found])
    out: list[Case] = []
    for (t0, pod, ftype, date), (t_prev, t_next) in zip(found, nb, strict=True):
        day = days[date]
        cause = pod_to_service(pod)
        if cause not in day.services:
            raise DatasetError(f"{date}: fault pod {pod} has no metric file")
        aw = alert_window(t0, t_next, day.end)
        bw = baseline_window(t0, t_prev, day.start)
        out.append(
            Case(
                dataset=dataset,
                case_id=f"{date}T{hms(t0)}-{cause}-{ftype}",
                fault_type=ftype,
                root_cause=cause,
                inject_time=t0,
                alert_window=aw,
                baseline_window=bw,
                symptom_service=day.entry,
                services=day.services,
                call_edges=tuple(CallEdge(c, s) for c, s in day.edges),
                metrics=tuple(cut(day.series, bw[0], aw[1])),
                changes=(),
                manifests=manifests,
                timeline=date,
                logs=tuple(x for x in day.logs if bw[0] <= x.t < aw[1]),
                spans=tuple(s for s in day.spans if bw[0] <= s.end_s < aw[1]),
            )
        )
    return out
