"""ChangeRCA (FSE'24) Online Boutique defective-change cases: 51 experiments, 1-minute data.

Layout read: ``data/<date>/<date>_<n>/`` with ``<date>_<n>.json`` (label + release plan),
``<pod>_<caller>_<callee>.csv`` (per-pod series on each call edge it takes part in),
``dependency.csv`` and ``source_success.csv``.

* Fault start: the **first release of any service** in the case (``min(plan[*].release_time)``).
  The defective release itself is not used: its time is the label in disguise, and
  ``changes`` lists every release, so using it would let a method read the answer off
  "which change is at inject_time". All releases start within ~4 min of the first one.
* ``recorded_alert``: ``detect_timestamp``, when the experiment's alerting fired (0.2-8.3 min
  after the first release). The frontend's own series rarely leave their band, so the
  replay falls back on it where its detector finds nothing (`eval/alerting.py`).
* Windows: the shared rule in ``_common`` (cases are separate ~40 min experiments, so the
  baseline is the 20 min of pre-release data and the alert window is 10 min).
  ``timeline`` = the case id: every experiment is its own recording.
* Services: pods map to services by dropping the ``-v<k>-<rs>-<id>`` suffix; v1 and v2 pods
  both count. Timestamps are snapped to the minute. A pod's ``CPUUsageRate(%)``,
  ``MemoryUsageRate(%)`` and ``Latency`` are the same in all its edge files (checked), so
  each is taken once per pod and minute, then averaged over the service's pods.

Signals:

* ``cpu`` (cores) = mean ``CPUUsageRate(%)`` / 100, i.e. read as a share of a 1-core limit
  (the manifest with the real limits is not published).
* ``memory`` (bytes) = mean ``MemoryUsageRate(%)`` / 100 * 2**30, likewise read against an
  assumed 1 GiB limit. Both keep the shape of the data; their absolute level is assumed.
* Edges: the service->service rows of ``dependency.csv`` (rows to node IPs are placement;
  ``loadgenerator -> X`` rows would become ``user -> X``, but the data has none).
  ``errors`` = 1 - ``source_success.csv`` / 100 per minute (the caller's view of its calls).
  ``latency_server`` (s) = the per-minute mean of the callee pods' ``Latency`` (ms) / 1000;
  as ``Latency`` is per pod, not per edge, it is the service's own latency, put on each of
  its incoming edges by ``_common.spread_to_callers`` -- so the entry service ``frontend``
  gets ``user -> frontend`` with its pods' ``Latency``. A ``Latency`` of exactly 0 (under
  1% of the rows: a pod without requests that minute) is no measurement and is dropped.
  Which statistic ``Latency`` is (mean or a percentile) is not documented.
* No ``requests``: the data holds no request count (``gied*.json`` has failure counts only,
  prepared by the authors around the changes under test), so the writer's default applies.

Left out: ``NodeCpuUsageRate(%)`` (node-level); the last column, labelled
``NodeMemoryUsageRate(%)``, varies per edge with values ~0.005 (not a memory rate);
the per-pod ``SuccessRate`` (per pod and edge, the same information as the success
tables); ``destination_success.csv`` (the caller's view is kept, see above).

Changes: one ``ChangeEvent(service, "v2", release_time)`` per released service.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._common import (
    alert_window,
    baseline_window,
    cut,
    entry_service,
    neighbours,
    read_csv,
    read_json,
    require_dir,
    spread_to_callers,
    to_float,
)
from .model import USER, CallEdge, Case, ChangeEvent, DatasetError, MetricSeries, series

NAME = "changerca"
LOADGEN = "loadgenerator"
_POD = re.compile(r"^(?P<svc>[a-z0-9-]+?)-v\d+-[a-z0-9]+-[a-z0-9]+$")
_CPU, _MEM, _LAT = "CPUUsageRate(%)", "MemoryUsageRate(%)", "Latency"
_STEP = 60.0


def pod_to_service(pod: str) -> str:
    """``adservice-v2-fd6989b7c-w7f44`` -> ``adservice``."""
    m = _POD.match(pod)
    if m:
        return m.group("svc")
    parts = pod.split("-")
    return "-".join(parts[:-2]) if len(parts) > 2 else pod


def _snap(ts: float) -> float:
    """To the minute; a junk timestamp stays NaN (a gap)."""
    return round(ts / _STEP) * _STEP if np.isfinite(ts) else np.nan


@dataclass
class _Parsed:
    """One case folder: per-service minute series, the call graph and the success table."""

    per_service: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]  # svc -> col -> (t, v)
    dep: list[tuple[str, str]]
    src_t: np.ndarray
    src_succ: dict[tuple[str, str], np.ndarray]  # edge -> source (caller-side) success %


def _load_case(case_dir: Path) -> _Parsed:
    """Parse one case folder."""
    # (service, pod) -> column -> minute -> value (a pod's value is the same in all its files)
    pods: dict[tuple[str, str], dict[str, dict[float, float]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for f in sorted(case_dir.glob("*_*_*.csv")):
        parts = f.name[: -len(".csv")].split("_")
        if len(parts) != 3:
            continue
        pod = parts[0]
        header, rows = read_csv(f)
        if "Timestamp" not in header:
            raise DatasetError(f"{f}: no 'Timestamp' column")
        ti = header.index("Timestamp")
        idx = {k: header.index(k) for k in (_CPU, _MEM, _LAT) if k in header}
        acc = pods[(pod_to_service(pod), pod)]
        for r in rows:
            t = _snap(to_float(r[ti]) if ti < len(r) else np.nan)
            if not np.isfinite(t):
                continue
            for k, j in idx.items():
                acc[k].setdefault(t, to_float(r[j]) if j < len(r) else np.nan)
    # service -> column -> minute -> values over its pods
    svc_acc: dict[str, dict[str, dict[float, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for (svc, _), cols in pods.items():
        for k, by_t in cols.items():
            for t, v in by_t.items():
                if np.isfinite(v) and not (k == _LAT and v == 0.0):
                    svc_acc[svc][k][t].append(v)
    per_service = {
        svc: {
            k: (
                np.array(sorted(by_t), dtype=np.float64),
                np.array([np.mean(by_t[t]) for t in sorted(by_t)], dtype=np.float64),
            )
            for k, by_t in cols.items()
        }
        for svc, cols in svc_acc.items()
    }
    _, dep = read_csv(case_dir / "dependency.csv")
    st, src_succ = _edge_table(case_dir / "source_success.csv")
    return _Parsed(per_service, [(r[0], r[1]) for r in dep if len(r) >= 2], st, src_succ)


def _edge_table(path: Path) -> tuple[np.ndarray, dict[tuple[str, str], np.ndarray]]:
    """Minute times and one column per ``caller_callee`` edge."""
    header, rows = read_csv(path)
    if "timestamp" not in header:
        raise DatasetError(f"{path}: no 'timestamp' column")
    ti = header.index("timestamp")
    times = np.array([_snap(to_float(r[ti]) if ti < len(r) else np.nan) for r in rows])
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


def _signals(
    parsed: _Parsed, services: tuple[str, ...], edges: list[tuple[str, str]]
) -> list[MetricSeries]:
    """Every signal of one case over its whole recording (see the module docstring)."""
    out: list[MetricSeries] = []
    for svc in services:
        cols = parsed.per_service[svc]
        if _CPU in cols:
            out.append(series(svc, "cpu", cols[_CPU][0], cols[_CPU][1] / 100.0))
        if _MEM in cols:
            out.append(series(svc, "memory", cols[_MEM][0], cols[_MEM][1] / 100.0 * 2.0**30))
        if _LAT in cols:
            lt, lv = cols[_LAT]
            out.extend(spread_to_callers(svc, edges, lt, latency_server=lv / 1000.0))
    for (c, s), succ in sorted(parsed.src_succ.items()):
        client = USER if c == LOADGEN else c
        if (client, s) in edges:
            out.append(series(s, "errors", parsed.src_t, 1.0 - succ / 100.0, client=client))
    return out


def _recorded_alert(label: dict[str, Any], start: float, end: float) -> float | None:
    """The experiment's own alert time, if it lies in the case's alert window."""
    at = label.get("detect_timestamp")
    if not isinstance(at, int | float) or not start <= float(at) < end:
        return None
    return float(at)


def load(path: Path) -> list[Case]:
    """Load every ChangeRCA case under ``path`` (the ``changerca-ob`` dataset folder)."""
    dirs = _case_dirs(Path(path))
    labels = [read_json(d / f"{d.name}.json") for d in dirs]
    starts = []
    for d, lab in zip(dirs, labels, strict=True):
        plan = lab.get("plan") if isinstance(lab, dict) else None
        if not isinstance(plan, dict) or not plan or "fault_release_service" not in lab:
            raise DatasetError(f"{d}: label JSON lacks 'plan' or 'fault_release_service'")
        try:
            starts.append(float(min(p["release_time"] for p in plan.values())))
        except (TypeError, KeyError, ValueError) as exc:
            raise DatasetError(
                f"{d}: a release in the label's 'plan' lacks a numeric "
                f"'release_time' ({type(exc).__name__}: {exc})"
            ) from exc
    nb = neighbours(starts)
    cases = []
    for d, lab, t0, (t_prev, t_next) in zip(dirs, labels, starts, nb, strict=True):
        parsed = _load_case(d)
        services = tuple(sorted(s for s in parsed.per_service if s != LOADGEN and "." not in s))
        graph = sorted({(c, s) for c, s in parsed.dep if c in services and s in services})
        entries = sorted({(USER, s) for c, s in parsed.dep if c == LOADGEN and s in services})
        all_t = np.concatenate([t for m in parsed.per_service.values() for t, _ in m.values()])
        data_start, data_end = float(all_t.min()), float(all_t.max()) + _STEP
        aw = alert_window(t0, t_next, data_end)
        bw = baseline_window(t0, t_prev, data_start)
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
                symptom_service=entry_service(graph, services),
                services=services,
                call_edges=tuple(CallEdge(c, s) for c, s in graph),
                metrics=tuple(cut(_signals(parsed, services, graph + entries), bw[0], aw[1])),
                changes=changes,
                manifests="online-boutique",
                timeline=d.name,
                recorded_alert=_recorded_alert(lab, t0, aw[1]),
            )
        )
    return cases
