"""RCD (NeurIPS'22) Sock Shop cases: 5 services x {cpu, mem} x 5 repetitions, 1-second data.

Layout read: ``sock-shop-data/<service>-<fault>/<rep>/{normal.csv, anomalous.csv}``.

* Label = directory name. Fault start = the first ``time`` of ``anomalous.csv`` (the file is
  the post-injection recording; there is no other inject time).
* Windows: the shared rule in ``_common``. The fault-free data before the fault is
  ``normal.csv``, a separate recording made hours or days earlier, so the baseline is its
  last 20 min (in practice the whole ~5 min file) and the alert window is the anomalous
  file (~5 min, under the 10 min cap). ``metrics`` therefore has a time gap between the
  two windows. Different cases' recordings never overlap in time.
* Services: the container prefix of each ``<container>_<metric>`` column (13 containers,
  matching the Deployment names of the Sock Shop manifest). ``MetricSeries.name`` is the
  column suffix (``cpu``, ``mem``, ``lod``, ``lat_90``...), so ``<service>_<name>`` gives the
  original column back.
* Call edges: the data has no traces, so the static Sock Shop call graph is used
  (front-end -> carts/catalogue/orders/user, orders -> carts/payment/shipping/user, each
  service -> its database, shipping and queue-master -> rabbitmq; the session-db edge is
  left out because session-db is not in the data). There are no per-edge metrics:
  ``trace_count`` is 1.0 ("edge exists, volume unknown"), ``error_rate`` 0.0, latency None.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._common import (
    alert_window,
    baseline_window,
    entry_service,
    make_edge,
    neighbours,
    read_csv,
    require_dir,
    slice_series,
    to_float,
)
from .model import Case, DatasetError, MetricSeries

NAME = "rcd-sockshop"
STATIC_EDGES: tuple[tuple[str, str], ...] = (
    ("front-end", "carts"),
    ("front-end", "catalogue"),
    ("front-end", "orders"),
    ("front-end", "user"),
    ("orders", "carts"),
    ("orders", "payment"),
    ("orders", "shipping"),
    ("orders", "user"),
    ("carts", "carts-db"),
    ("catalogue", "catalogue-db"),
    ("orders", "orders-db"),
    ("user", "user-db"),
    ("shipping", "rabbitmq"),
    ("queue-master", "rabbitmq"),
)
_STEP = 1.0


def metric_kind(suffix: str) -> str:
    """Map an RCD column suffix to a MetricSeries kind."""
    if suffix == "cpu":
        return "cpu"
    if suffix == "mem":
        return "memory"
    if suffix == "lod":
        return "workload"
    if suffix.startswith("lat"):
        return "latency"
    return "other"


def _read(path: Path) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    header, rows = read_csv(path)
    if "time" not in header:
        raise DatasetError(f"{path}: no 'time' column")
    ti = header.index("time")
    times = np.array([to_float(r[ti]) for r in rows], dtype=np.float64)
    cols = {
        name: np.array([to_float(r[j]) for r in rows], dtype=np.float64)
        for j, name in enumerate(header)
        if j != ti and "_" in name
    }
    return times, cols


def load(path: Path) -> list[Case]:
    """Load every RCD Sock Shop case under ``path`` (the ``rcd-sockshop`` dataset folder)."""
    data = require_dir(
        Path(path) / "sock-shop-data", "rcd-sockshop dataset (expects sock-shop-data/<svc>-<f>/)"
    )
    rep_dirs = sorted(
        r for d in data.iterdir() if d.is_dir() and "-" in d.name for r in d.iterdir() if r.is_dir()
    )
    if not rep_dirs:
        raise DatasetError(f"{data}: no <service>-<fault>/<rep>/ folders")
    loaded = []
    for rd in rep_dirs:
        for f in ("normal.csv", "anomalous.csv"):
            if not (rd / f).exists() and not (rd / f"{f}.gz").exists():
                raise DatasetError(f"{rd}: missing {f}")
        nt, ncols = _read(rd / "normal.csv")
        at, acols = _read(rd / "anomalous.csv")
        loaded.append((rd, nt, ncols, at, acols))
    starts = [float(np.nanmin(at)) for _, _, _, at, _ in loaded]
    normals = [(float(np.nanmax(nt)) + _STEP, rd, nt, ncols) for rd, nt, ncols, _, _ in loaded]
    nb = neighbours(starts)
    cases = []
    for (rd, nt, ncols, at, acols), t0, (t_prev, t_next) in zip(loaded, starts, nb, strict=True):
        svc_fault = rd.parent.name
        root, fault = svc_fault.rsplit("-", 1)
        aw = alert_window(t0, t_next, float(np.nanmax(at)) + _STEP)
        # "Data before t0" is the case's own normal recording. One case (orders-mem/5) has
        # it recorded *after* the fault; then the latest other normal recording before t0
        # is used, as the baseline must precede the fault.
        n_end = float(np.nanmax(nt)) + _STEP
        if n_end > t0:
            before = [n for n in normals if n[0] <= t0]
            if not before:
                raise DatasetError(f"{rd}: no normal.csv recorded before anomalous.csv")
            n_end, _, nt, ncols = max(before, key=lambda n: n[0])
        bw0 = baseline_window(n_end, t_prev if t_prev and t_prev < n_end else None, nt.min())[0]
        bw = (float(bw0), float(n_end))
        times = np.concatenate([nt, at])
        cols = sorted(set(ncols) & set(acols))
        services = tuple(sorted({c.split("_", 1)[0] for c in cols}))
        metrics: list[MetricSeries] = []
        for c in cols:
            svc, suffix = c.split("_", 1)
            vals = np.concatenate([ncols[c], acols[c]])
            ms = slice_series(svc, suffix, metric_kind(suffix), times, vals, bw[0], aw[1])
            if ms is not None:
                metrics.append(ms)
        if root not in services:
            raise DatasetError(f"{rd}: root cause {root} has no metric columns")
        edges_sv = [(c, s) for c, s in STATIC_EDGES if c in services and s in services]
        cases.append(
            Case(
                dataset=NAME,
                case_id=f"{svc_fault}/{rd.name}",
                fault_type=fault,
                root_cause=root,
                inject_time=t0,
                alert_window=aw,
                baseline_window=bw,
                symptom_service=entry_service(edges_sv, services),
                services=services,
                call_edges=tuple(make_edge(c, s, 1.0, 0.0, None) for c, s in edges_sv),
                metrics=tuple(metrics),
                changes=(),
                manifests="sock-shop",
            )
        )
    return cases
