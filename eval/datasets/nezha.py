"""Nezha (FSE'23) Online Boutique cases: 56 injected faults over two days, 1-minute metrics.

Layout read: ``rca_data/<date>/<date>-fault_list.json`` and ``rca_data/<date>/metric/``
(``<pod>_metric.csv[.gz]``, ``front_service.csv``, ``dependency.csv``, ``source_50.csv``,
``destination_50.csv``).

* Fault start = the ``inject_time`` string read as UTC (``inject_timestamp`` is unreliable,
  see SOURCE.md). Root cause = the injected pod's service (drop the last two ``-`` segments).
* Metric times come from the ``Time`` strings (the pod ``TimeStamp`` column is shifted by
  +2e8 s on 2022-08-22). A row stamped ``t`` aggregates the minute ending at ``t``.
* Windows: the shared rule in ``_common`` on one timeline over both days. Faults are 7-9 min
  apart, so the alert window is clipped at the next fault (typically 8 min) and the
  baseline is the ~3 min between the previous fault's effect and this fault.
  ``timeline`` = the date: the cases of a day are cut from that day's recording.
* Services: the 10 pods with metric files (one pod each).

Signals (checked on the data):

* ``cpu`` (cores) = ``CpuUsage(m)`` / 100. Despite its name the column is in tens of
  millicores (percent of one core): ``CpuUsage(m)`` / ``CpuUsageRate(%)`` equals the pod's
  CPU limit in cores in every row (0.3 for cartservice's 300m, 0.2 for 200m pods), and
  under cpu faults the column tops out at 20-30, i.e. at the 200m/300m limits (``/1000``
  would put every pod at 2-3% of its limit while ``CpuUsageRate(%)`` reads 100%).
* ``memory`` (bytes) = ``MemoryUsage(Mi)`` * 2**20 (``MemoryUsage(Mi)`` / ``MemoryUsageRate(%)``
  is the manifest's memory limit in Mi / 100).
* ``network_rx`` / ``network_tx`` (bytes/s) = ``NetworkReceiveBytes`` / ``NetworkTransmitBytes``
  as they are: they are per-second rates (fractional ``rate()`` outputs, on the same time
  base as ``PodWorkload(Ops)``: per minute, the frontend would serve 8 requests a minute
  to 10 load-generator users and receive ~500 B/s).
* Edges: the 14 service->service rows of ``dependency.csv`` (rows to node IPs and from
  ``loadgenerator`` are placement, not calls). ``latency_client`` (s) = ``source_50.csv``
  (measured at the caller; network_delay faults show here, x30-x250, and not at the
  callee), ``latency_server`` (s) = ``destination_50.csv`` (at the callee). Both are the
  per-minute *median* of the edge (the data has no per-edge p95). ``requests`` (req/s) =
  the callee's ``PodWorkload(Ops)`` (a per-second rate, as above) split evenly among its
  callers (``_common.spread_to_callers``). No per-edge error signal exists: no ``errors``.
* Entry edge ``user -> frontend`` (the graph's entry service): ``front_service.csv`` gives
  ``errors`` = 1 - ``SuccessRate(%)`` / 100 and ``latency_server`` = ``latency_client`` =
  ``LatencyP95(s)``; ``requests`` = the frontend's ``PodWorkload(Ops)``.

Left out: ``PodSuccessRate(%)`` (constant 0); ``CpuUsageRate(%)``, ``MemoryUsageRate(%)``
(cpu/memory relative to the limit: duplicates); ``SyscallRead``/``SyscallWrite`` and the
``Node*`` columns (no per-service exporter meaning here); ``PodClientLatencyP90/95/99(s)``,
``PodServerLatencyP90/95/99(s)`` (per pod, not per edge: the edge series carry latency);
``front_service.csv``'s P50/P90/P99.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from ._common import (
    alert_window,
    baseline_window,
    cut,
    entry_service,
    neighbours,
    parse_go_time,
    parse_utc,
    read_csv,
    require_dir,
    spread_to_callers,
    to_float,
)
from .model import CallEdge, Case, DatasetError, MetricSeries, series

NAME = "nezha"
_POD_FILE = re.compile(r"^(?P<pod>.+)_metric\.csv(\.gz)?$")
_SKIP_COLS = {"Time", "TimeStamp", "PodName", "ServiceName"}
# pod column -> (signal, factor to the signal's unit)
_POD_SIGNALS = {
    "CpuUsage(m)": ("cpu", 1.0 / 100.0),
    "MemoryUsage(Mi)": ("memory", float(2**20)),
    "NetworkReceiveBytes": ("network_rx", 1.0),
    "NetworkTransmitBytes": ("network_tx", 1.0),
}
_WORKLOAD = "PodWorkload(Ops)"


def pod_to_service(pod: str) -> str:
    """``cartservice-6d9f8b7c5d-abcde`` -> ``cartservice`` (drop the last two segments)."""
    parts = pod.split("-")
    return "-".join(parts[:-2]) if len(parts) > 2 else pod


@dataclass
class _Day:
    """One date's recording: every signal over the whole day, plus its call graph."""

    services: tuple[str, ...]
    edges: list[tuple[str, str]]
    entry: str
    series: list[MetricSeries]
    start: float
    end: float


def _read_table(path: Path, time_col: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    header, rows = read_csv(path)
    if time_col not in header:
        raise DatasetError(f"{path}: no {time_col!r} column")
    ti = header.index(time_col)
    times = np.array([parse_go_time(r[ti]) for r in rows], dtype=np.float64)
    cols: dict[str, np.ndarray] = {}
    for j, name in enumerate(header):
        if name in _SKIP_COLS or name.lower() in {"time", "timestamp"}:
            continue
        cols[name] = np.array([to_float(r[j]) if j < len(r) else np.nan for r in rows])
    return times, cols


def _column(path: Path, cols: dict[str, np.ndarray], name: str) -> np.ndarray:
    if name not in cols:
        raise DatasetError(f"{path}: no {name!r} column")
    return cols[name]


def _edge_table(path: Path) -> tuple[np.ndarray, dict[tuple[str, str], np.ndarray]]:
    times, cols = _read_table(path, "time")
    out = {}
    for name, vals in cols.items():
        if "_" in name:
            c, s = name.split("_", 1)
            out[(c, s)] = vals
    return times, out


def _load_day(metric_dir: Path) -> _Day:
    files = sorted(p for p in metric_dir.iterdir() if _POD_FILE.match(p.name))
    if not files:
        raise DatasetError(f"{metric_dir}: no <pod>_metric.csv[.gz] files")
    out: list[MetricSeries] = []
    workload: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for f in files:
        m = _POD_FILE.match(f.name)
        assert m is not None
        svc = pod_to_service(m.group("pod"))
        if svc in workload:
            raise DatasetError(f"{metric_dir}: two pods of {svc}; aggregation not implemented")
        times, cols = _read_table(f, "Time")
        for col, (signal, factor) in _POD_SIGNALS.items():
            out.append(series(svc, signal, times, _column(f, cols, col) * factor))
        workload[svc] = (times, _column(f, cols, _WORKLOAD))
    services = tuple(sorted(workload))
    _, rows = read_csv(metric_dir / "dependency.csv")
    edges = sorted({(r[0], r[1]) for r in rows if r[0] in workload and r[1] in workload})
    entry = entry_service(edges, services)
    for svc, (times, wl) in workload.items():
        out.extend(spread_to_callers(svc, edges, times, requests=wl))
    for file, signal in (
        ("source_50.csv", "latency_client"),
        ("destination_50.csv", "latency_server"),
    ):
        et, by_edge = _edge_table(metric_dir / file)
        for c, s in edges:
            if (c, s) in by_edge:
                out.append(series(s, signal, et, by_edge[(c, s)], client=c))
    fpath = metric_dir / "front_service.csv"
    ft, fcols = _read_table(fpath, "Time")
    p95 = _column(fpath, fcols, "LatencyP95(s)")
    out.extend(
        spread_to_callers(
            entry,
            edges,
            ft,
            errors=1.0 - _column(fpath, fcols, "SuccessRate(%)") / 100.0,
            latency_server=p95,
            latency_client=p95,
        )
    )
    all_t = np.concatenate([t for t, _ in workload.values()])
    return _Day(services, edges, entry, out, float(all_t.min()), float(all_t.max()) + 60.0)


def _faults(day_dir: Path) -> list[tuple[float, str, str, str]]:
    date = day_dir.name
    path = day_dir / f"{date}-fault_list.json"
    if not path.exists():
        raise DatasetError(f"{day_dir}: missing label file {path.name}")
    data = json.loads(path.read_text())
    out = []
    for items in data.values():
        for it in items:
            out.append((parse_utc(it["inject_time"]), it["inject_pod"], it["inject_type"], date))
    return out


def load(path: Path) -> list[Case]:
    """Load every Nezha OB case under ``path`` (the ``nezha`` dataset folder)."""
    rca = require_dir(Path(path) / "rca_data", "nezha dataset (expects rca_data/<date>/)")
    day_dirs = sorted(d for d in rca.iterdir() if d.is_dir() and (d / "metric").is_dir())
    if not day_dirs:
        raise DatasetError(f"{rca}: no <date>/metric/ folders")
    days = {d.name: _load_day(d / "metric") for d in day_dirs}
    faults = sorted(f for d in day_dirs for f in _faults(d))
    nb = neighbours([f[0] for f in faults])
    cases: list[Case] = []
    for (t0, pod, ftype, date), (t_prev, t_next) in zip(faults, nb, strict=True):
        day = days[date]
        root = pod_to_service(pod)
        if root not in day.services:
            raise DatasetError(f"{date}: fault pod {pod} has no metric file")
        aw = alert_window(t0, t_next, day.end)
        bw = baseline_window(t0, t_prev, day.start)
        cases.append(
            Case(
                dataset=NAME,
                case_id=f"{date}T{_hms(t0)}-{root}-{ftype}",
                fault_type=ftype,
                root_cause=root,
                inject_time=t0,
                alert_window=aw,
                baseline_window=bw,
                symptom_service=day.entry,
                services=day.services,
                call_edges=tuple(CallEdge(c, s) for c, s in day.edges),
                metrics=tuple(cut(day.series, bw[0], aw[1])),
                changes=(),
                manifests="online-boutique",
                timeline=date,
            )
        )
    return cases


def _hms(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%H%M%S")
