"""ChangeRCA (FSE'24) Online Boutique defective-change cases: 51 experiments, 1-minute data.

Layout read: ``data/<date>/<date>_<n>/`` with ``<date>_<n>.json`` (label + release plan),
``<pod>_<caller>_<callee>.csv`` (per-pod series on each call edge it takes part in),
``dependency.csv`` and ``destination_success.csv``.

* Fault start: the **first release of any service** in the case (``min(plan[*].release_time)``).
  The defective release itself is not used: its time is the label in disguise, and
  ``changes`` lists every release, so using it would let a method read the answer off
  "which change is at inject_time". All releases start within ~4 min of the first one and
  the recorded alert (``detect_time``) is 0.2-8.3 min after it, inside the 10 min alert window.
* Windows: the shared rule in ``_common`` (cases are separate ~40 min experiments, so the
  baseline is the 20 min of pre-release data and the alert window is 10 min).
* Services: pods map to services by dropping the ``-v<k>-<rs>-<id>`` suffix. Per-service
  metrics are the mean over the service's pods (v1 and v2) and edge files per minute bucket
  (timestamps are snapped to the minute). ``SuccessRate``, ``Latency``, ``CPUUsageRate(%)``,
  ``MemoryUsageRate(%)``, ``NodeCpuUsageRate(%)`` are kept; the last column, labelled
  ``NodeMemoryUsageRate(%)``, varies per edge with values ~0.005 (it is not a memory rate),
  so it is left out rather than mislabelled.
* Call edges: service->service rows of ``dependency.csv``. ``error_rate`` = 1 - mean
  ``destination_success.csv`` / 100 over the alert window; ``trace_count`` is a relative
  proxy (number of callee pod-minutes with data on that edge in the window; no counts exist);
  ``latency_p95_ms`` = 95th percentile of the callee pods' ``Latency`` (ms) on that edge.
* Edge series (served as the callee's metrics ``from:<caller>``, ``_common.edge_series_name``):
  ``errors`` = 1 - ``source_success.csv`` / 100 per minute (the caller's view of its calls),
  ``latency`` = the per-minute mean of the callee pods' ``Latency`` on that edge.
* Changes: one ``ChangeEvent(service, "v2", release_time)`` per released service.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._common import (
    alert_window,
    baseline_window,
    edge_series_name,
    entry_service,
    make_edge,
    neighbours,
    read_csv,
    require_dir,
    slice_series,
    to_float,
    window_values,
)
from .model import Case, ChangeEvent, DatasetError, MetricSeries

NAME = "changerca"
_POD = re.compile(r"^(?P<svc>[a-z0-9-]+?)-v\d+-[a-z0-9]+-[a-z0-9]+$")
_KEEP = {
    "SuccessRate": "errors",
    "Latency": "latency",
    "CPUUsageRate(%)": "cpu",
    "MemoryUsageRate(%)": "memory",
    "NodeCpuUsageRate(%)": "other",
}
_STEP = 60.0


def pod_to_service(pod: str) -> str:
    """``adservice-v2-fd6989b7c-w7f44`` -> ``adservice``."""
    m = _POD.match(pod)
    if m:
        return m.group("svc")
    parts = pod.split("-")
    return "-".join(parts[:-2]) if len(parts) > 2 else pod


def _finite_mean(xs: list[float]) -> float:
    """Mean of the finite values, NaN if there are none (no numpy warning)."""
    ok = [x for x in xs if np.isfinite(x)]
    return sum(ok) / len(ok) if ok else float("nan")


def _snap(ts: float) -> float:
    return round(ts / _STEP) * _STEP


@dataclass
class _Parsed:
    """One case folder parsed into plain containers (kept apart from windowing)."""

    series: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]  # service -> metric -> (t, v)
    dep: list[tuple[str, str]]
    edge_lat: dict[tuple[str, str], dict[float, list[float]]]  # edge -> minute -> latencies
    succ_t: np.ndarray
    succ: dict[tuple[str, str], np.ndarray]  # edge -> destination success %
    src_t: np.ndarray
    src_succ: dict[tuple[str, str], np.ndarray]  # edge -> source (caller-side) success %


def _load_case(case_dir: Path) -> _Parsed:
    """Parse one case folder."""
    # service -> metric -> minute -> list of values
    acc: dict[str, dict[str, dict[float, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    # (caller, callee) -> minute -> list of callee latencies
    edge_lat: dict[tuple[str, str], dict[float, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for f in sorted(case_dir.glob("*_*_*.csv")):
        parts = f.name[: -len(".csv")].split("_")
        if len(parts) != 3:
            continue
        pod, caller, callee = parts
        svc = pod_to_service(pod)
        header, rows = read_csv(f)
        if "Timestamp" not in header:
            raise DatasetError(f"{f}: no 'Timestamp' column")
        ti = header.index("Timestamp")
        idx = {k: header.index(k) for k in _KEEP if k in header}
        li = header.index("Latency") if "Latency" in header else -1
        for r in rows:
            t = _snap(to_float(r[ti]))
            for k, j in idx.items():
                acc[svc][k][t].append(to_float(r[j]))
            if svc == callee and li >= 0:
                edge_lat[(caller, callee)][t].append(to_float(r[li]))
    series: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
    for svc, mets in acc.items():
        series[svc] = {}
        for k, buckets in mets.items():
            ts = np.array(sorted(buckets), dtype=np.float64)
            vs = np.array([_finite_mean(buckets[t]) for t in ts], dtype=np.float64)
            series[svc][k] = (ts, vs)
    _, dep = read_csv(case_dir / "dependency.csv")
    dt, succ = _edge_table(case_dir / "destination_success.csv")
    st, src_succ = _edge_table(case_dir / "source_success.csv")
    deps = [(r[0], r[1]) for r in dep if len(r) >= 2]
    return _Parsed(series, deps, edge_lat, dt, succ, st, src_succ)


def _edge_table(path: Path) -> tuple[np.ndarray, dict[tuple[str, str], np.ndarray]]:
    """Minute times and one column per ``caller_callee`` edge."""
    header, rows = read_csv(path)
    if "timestamp" not in header:
        raise DatasetError(f"{path}: no 'timestamp' column")
    ti = header.index("timestamp")
    times = np.array([_snap(to_float(r[ti])) for r in rows])
    cols: dict[tuple[str, str], np.ndarray] = {}
    for j, name in enumerate(header):
        if "_" in name and name not in {"time", "timestamp"}:
            c, s = name.split("_", 1)
            cols[(c, s)] = np.array([to_float(r[j]) if j < len(r) else np.nan for r in rows])
    return times, cols


def _case_dirs(root: Path) -> list[Path]:
    data = require_dir(root / "data", "changerca dataset (expects data/<date>/<date>_<n>/)")
    dirs = sorted(d for d in data.glob("*/*") if d.is_dir() and (d / f"{d.name}.json").exists())
    if not dirs:
        raise DatasetError(f"{data}: no case folders <date>/<date>_<n>/ with <date>_<n>.json")
    return dirs


def load(path: Path) -> list[Case]:
    """Load every ChangeRCA case under ``path`` (the ``changerca-ob`` dataset folder)."""
    dirs = _case_dirs(Path(path))
    labels = [json.loads((d / f"{d.name}.json").read_text()) for d in dirs]
    starts = []
    for d, lab in zip(dirs, labels, strict=True):
        plan = lab.get("plan") or {}
        if not plan or "fault_release_service" not in lab:
            raise DatasetError(f"{d}: label JSON lacks 'plan' or 'fault_release_service'")
        starts.append(float(min(p["release_time"] for p in plan.values())))
    nb = neighbours(starts)
    cases = []
    for d, lab, t0, (t_prev, t_next) in zip(dirs, labels, starts, nb, strict=True):
        parsed = _load_case(d)
        series, dep = parsed.series, parsed.dep
        names = set(series) | {s for e in dep for s in e}
        services = tuple(
            sorted(s for s in names if s in series and s != "loadgenerator" and "." not in s)
        )
        edges_sv = sorted({(c, s) for c, s in dep if c in services and s in services})
        all_t = np.concatenate([ts for m in series.values() for ts, _ in m.values()])
        data_start, data_end = float(all_t.min()), float(all_t.max()) + _STEP
        aw = alert_window(t0, t_next, data_end)
        bw = baseline_window(t0, t_prev, data_start)
        metrics: list[MetricSeries] = []
        for svc in services:
            for k, (ts, vs) in series[svc].items():
                ms = slice_series(svc, k, _KEEP[k], ts, vs, bw[0], aw[1])
                if ms is not None:
                    metrics.append(ms)
        dt, succ, edge_lat = parsed.succ_t, parsed.succ, parsed.edge_lat
        edges = []
        for c, s in edges_sv:
            name = edge_series_name(c)
            ssv = parsed.src_succ.get((c, s))
            if ssv is not None:
                ms = slice_series(s, name, "errors", parsed.src_t, 1.0 - ssv / 100.0, bw[0], aw[1])
                if ms is not None:
                    metrics.append(ms)
            buckets = edge_lat.get((c, s), {})
            if buckets:
                lt = np.array(sorted(buckets), dtype=np.float64)
                lv = np.array([_finite_mean(buckets[t]) for t in lt], dtype=np.float64)
                ms = slice_series(s, name, "latency", lt, lv, bw[0], aw[1])
                if ms is not None:
                    metrics.append(ms)
            sv = succ.get((c, s))
            err = 0.0
            if sv is not None:
                w = window_values(dt, sv, aw)
                err = 1.0 - float(w.mean()) / 100.0 if w.size else 0.0
            buckets = edge_lat.get((c, s), {})
            lat = [v for t, vs in buckets.items() if aw[0] <= t < aw[1] for v in vs]
            lat_arr = np.array(lat, dtype=np.float64)
            lat_arr = lat_arr[np.isfinite(lat_arr)]
            p95 = float(np.percentile(lat_arr, 95)) if lat_arr.size else None
            edges.append(make_edge(c, s, float(lat_arr.size), err, p95))
        plan = lab["plan"]
        changes = tuple(
            sorted(
                (
                    ChangeEvent(svc, "v2", float(p["release_time"]))
                    for svc, p in plan.items()
                    if float(p["release_time"]) < aw[1]
                ),
                key=lambda c: (c.at, c.service),
            )
        )
        root = str(lab["fault_release_service"])
        if root not in services:
            raise DatasetError(f"{d}: root cause {root} has no telemetry")
        cases.append(
            Case(
                dataset=NAME,
                case_id=d.name,
                fault_type=str(lab.get("fault", "unknown")),
                root_cause=root,
                inject_time=t0,
                alert_window=aw,
                baseline_window=bw,
                symptom_service=entry_service(edges_sv, services),
                services=services,
                call_edges=tuple(edges),
                metrics=tuple(metrics),
                changes=changes,
                manifests="online-boutique",
            )
        )
    return cases
