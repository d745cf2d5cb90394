"""Nezha (FSE'23) Online Boutique cases: 56 injected faults over two days, 1-minute metrics.

Layout read: ``rca_data/<date>/<date>-fault_list.json`` and ``rca_data/<date>/metric/``
(``<pod>_metric.csv[.gz]``, ``front_service.csv``, ``dependency.csv``, ``destination_50.csv``).

* Fault start = the ``inject_time`` string read as UTC (``inject_timestamp`` is unreliable,
  see SOURCE.md). Root cause = the injected pod's service (drop the last two ``-`` segments).
* Metric times come from the ``Time`` strings (the pod ``TimeStamp`` column is shifted by
  +2e8 s on 2022-08-22). A row stamped ``t`` aggregates the minute ending at ``t``.
* Windows: the shared rule in ``_common`` on one timeline over both days. Faults are 7-9 min
  apart, so the alert window is clipped at the next fault (typically 8 min) and the
  baseline is the ~3 min between the previous fault's effect and this fault.
* Services: the 10 pods with metric files. ``front_service.csv`` (entry KPI) is attached to
  ``frontend``. ``PodSuccessRate(%)`` is constant 0 in the data and is kept as is.
* Call edges: the 14 service->service rows of ``dependency.csv`` (rows to node IPs and from
  ``loadgenerator`` are placement, not calls). There are no traces, so ``trace_count`` is a
  relative proxy (the callee pod's ``PodWorkload(Ops)`` summed over the alert window),
  ``error_rate`` is 0.0 (no per-edge error signal) and ``latency_p95_ms`` is the 95th
  percentile over the alert window's minutes of ``source_50.csv`` (per-minute median
  edge latency measured at the caller); the data holds no per-request p95.
* Edge series: ``source_50.csv`` per minute, served as the callee's ``latency`` series
  ``from:<caller>`` (``_common.edge_series_name``). The caller-side view is the one that
  contains the network between the two pods: a network_delay fault on a pod shows there
  (x30-x250 in the cases) and not in ``destination_50.csv``, measured at the callee.
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
    edge_series_name,
    entry_service,
    make_edge,
    neighbours,
    parse_go_time,
    parse_utc,
    read_csv,
    require_dir,
    slice_series,
    to_float,
    window_values,
)
from .model import Case, DatasetError, MetricSeries

NAME = "nezha"
_POD_FILE = re.compile(r"^(?P<pod>.+)_metric\.csv(\.gz)?$")
_SKIP_COLS = {"Time", "TimeStamp", "PodName", "ServiceName"}


def pod_to_service(pod: str) -> str:
    """``cartservice-6d9f8b7c5d-abcde`` -> ``cartservice`` (drop the last two segments)."""
    parts = pod.split("-")
    return "-".join(parts[:-2]) if len(parts) > 2 else pod


def metric_kind(column: str) -> str:
    """Map a Nezha metric column to a MetricSeries kind."""
    if column.startswith("Node"):
        return "other"  # node-level, shared by every pod on the node
    if "Latency" in column:
        return "latency"
    if "SuccessRate" in column:
        return "errors"
    if column.startswith("Cpu"):
        return "cpu"
    if column.startswith("Memory"):
        return "memory"
    if column.startswith("Network"):
        return "network"
    if "Workload" in column:
        return "workload"
    return "other"


@dataclass
class _Day:
    """Parsed metric folder of one date."""

    series: dict[str, dict[str, np.ndarray]]  # service -> column -> values; "__t" = times
    edges: list[tuple[str, str]]
    edge_latency: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]  # caller-side, seconds
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


def _load_day(metric_dir: Path) -> _Day:
    series: dict[str, dict[str, np.ndarray]] = {}
    files = sorted(p for p in metric_dir.iterdir() if _POD_FILE.match(p.name))
    if not files:
        raise DatasetError(f"{metric_dir}: no <pod>_metric.csv[.gz] files")
    for f in files:
        m = _POD_FILE.match(f.name)
        assert m is not None
        svc = pod_to_service(m.group("pod"))
        times, cols = _read_table(f, "Time")
        if svc in series:
            raise DatasetError(f"{metric_dir}: two pods of {svc}; aggregation not implemented")
        series[svc] = {"__t": times, **cols}
    ft, fcols = _read_table(metric_dir / "front_service.csv", "Time")
    if "frontend" in series:
        for name, vals in fcols.items():
            series["frontend"][f"front_service:{name}"] = vals
            series["frontend"][f"__t:front_service:{name}"] = ft
    _, rows = read_csv(metric_dir / "dependency.csv")
    edges = [(r[0], r[1]) for r in rows if r[0] in series and r[1] in series]
    dt, dcols = _read_table(metric_dir / "source_50.csv", "time")
    edge_lat: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
    for name, vals in dcols.items():
        if "_" in name:
            c, s = name.split("_", 1)
            edge_lat[(c, s)] = (dt, vals)
    all_t = np.concatenate([v["__t"] for v in series.values()])
    return _Day(series, edges, edge_lat, float(all_t.min()), float(all_t.max()) + 60.0)


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
        services = tuple(sorted(day.series))
        root = pod_to_service(pod)
        if root not in day.series:
            raise DatasetError(f"{date}: fault pod {pod} has no metric file")
        aw = alert_window(t0, t_next, day.end)
        bw = baseline_window(t0, t_prev, day.start)
        metrics: list[MetricSeries] = []
        for svc in services:
            cols = day.series[svc]
            for name, vals in cols.items():
                if name.startswith("__t"):
                    continue
                if name.startswith("front_service:"):
                    times, col = cols[f"__t:{name}"], name.split(":", 1)[1]
                else:
                    times, col = cols["__t"], name
                ms = slice_series(svc, col, metric_kind(col), times, vals, bw[0], aw[1])
                if ms is not None:
                    metrics.append(ms)
        for (c, s), (lt, lv) in sorted(day.edge_latency.items()):
            if c in day.series and s in day.series:
                ms = slice_series(s, edge_series_name(c), "latency", lt, lv, bw[0], aw[1])
                if ms is not None:
                    metrics.append(ms)
        edges = []
        for c, s in day.edges:
            srv = day.series[s]
            wl = window_values(srv["__t"], srv["PodWorkload(Ops)"], aw)
            lat = day.edge_latency.get((c, s))
            p95: float | None = None
            if lat is not None:
                lv = window_values(lat[0], lat[1], aw)
                p95 = float(np.percentile(lv, 95)) * 1000.0 if lv.size else None
            edges.append(make_edge(c, s, float(wl.sum()), 0.0, p95))
        cases.append(
            Case(
                dataset=NAME,
                case_id=f"{date}T{_hms(t0)}-{root}-{ftype}",
                fault_type=ftype,
                root_cause=root,
                inject_time=t0,
                alert_window=aw,
                baseline_window=bw,
                symptom_service=entry_service(day.edges, services),
                services=services,
                call_edges=tuple(edges),
                metrics=tuple(metrics),
                changes=(),
                manifests="online-boutique",
            )
        )
    return cases


def _hms(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%H%M%S")
