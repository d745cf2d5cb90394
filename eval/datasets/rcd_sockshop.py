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
  matching the Deployment names of the Sock Shop manifest).
* ``timeline`` = the case id: a case's ``normal.csv`` and ``anomalous.csv`` belong to it.
  orders-mem/5's own normal recording was made *after* its fault, so it takes the latest
  other case's normal recording before the fault; those series are copied into the case
  (its ``metrics`` hold them), so its timeline owns them and shifting it moves them along.

Signals, in the units of upstream ``collect-data.py`` (the Prometheus queries, SOURCE.md),
at 1-second steps (the rates are over the 45 s before each step):

* ``cpu`` (cores) = ``<c>_cpu`` / 100 (``sum(rate(container_cpu_usage_seconds_total)) * 100``).
* ``memory`` (bytes) = ``<c>_mem`` (``container_memory_usage_bytes``: it includes page
  cache, so it runs above cAdvisor's working set).
* Call edges: the data has no traces, so the static Sock Shop call graph is used
  (front-end -> carts/catalogue/orders/user, orders -> carts/payment/shipping/user, each
  service -> its database, shipping and queue-master -> rabbitmq; the session-db edge is
  left out because session-db is not in the data). For carts, catalogue and shipping,
  ``<s>_lod`` (req/s, ``rate(request_duration_seconds_count)``) and ``<s>_lat_90`` (s,
  ``histogram_quantile(0.90, request_duration_seconds_bucket)``; carts' quantiles top out
  at exactly 10, the Prometheus client's highest default bucket in seconds) are spread
  onto their incoming edges (``_common.spread_to_callers``) as ``requests`` and
  ``latency_server``. The latency is the service's p90: the data has no p95.

Left out: ``<s>_lat_50``, ``<s>_lat_99`` (other quantiles of the same histogram). No error
signal was exported (the upstream ``err`` query is not in the CSVs), and the entry service
front-end has no request signal, so there is no ``user -> front-end`` series.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._common import (
    alert_window,
    baseline_window,
    cut,
    entry_service,
    neighbours,
    read_csv,
    require_dir,
    spread_to_callers,
    to_float,
)
from .model import CallEdge, Case, DatasetError, MetricSeries, series

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


def _read(path: Path) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    header, rows = read_csv(path)
    if "time" not in header:
        raise DatasetError(f"{path}: no 'time' column")
    ti = header.index("time")
    times = np.array([to_float(r[ti]) if ti < len(r) else np.nan for r in rows])
    cols = {  # a short row's missing cells are gaps, as blanks are
        name: np.array([to_float(r[j]) if j < len(r) else np.nan for r in rows])
        for j, name in enumerate(header)
        if j != ti and "_" in name
    }
    return times, cols


def _signals(
    times: np.ndarray,
    cols: dict[str, np.ndarray],
    services: tuple[str, ...],
    edges: list[tuple[str, str]],
) -> list[MetricSeries]:
    """The case's signals from its columns (see the module docstring)."""
    out: list[MetricSeries] = []
    for svc in services:
        if f"{svc}_cpu" in cols:
            out.append(series(svc, "cpu", times, cols[f"{svc}_cpu"] / 100.0))
        if f"{svc}_mem" in cols:
            out.append(series(svc, "memory", times, cols[f"{svc}_mem"]))
        lod, lat = cols.get(f"{svc}_lod"), cols.get(f"{svc}_lat_90")
        if lod is not None or lat is not None:
            out.extend(spread_to_callers(svc, edges, times, requests=lod, latency_server=lat))
    return out


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
        # is used (copied into this case), as the baseline must precede the fault.
        n_end = float(np.nanmax(nt)) + _STEP
        if n_end > t0:
            before = [n for n in normals if n[0] <= t0]
            if not before:
                raise DatasetError(f"{rd}: no normal.csv recorded before anomalous.csv")
            n_end, _, nt, ncols = max(before, key=lambda n: n[0])
        bw0 = baseline_window(n_end, t_prev if t_prev and t_prev < n_end else None, nt.min())[0]
        bw = (float(bw0), float(n_end))
        times = np.concatenate([nt, at])
        common = sorted(set(ncols) & set(acols))
        cols = {c: np.concatenate([ncols[c], acols[c]]) for c in common}
        services = tuple(sorted({c.split("_", 1)[0] for c in common}))
        if root not in services:
            raise DatasetError(f"{rd}: root cause {root} has no metric columns")
        edges = [(c, s) for c, s in STATIC_EDGES if c in services and s in services]
        cases.append(
            Case(
                dataset=NAME,
                case_id=f"{svc_fault}/{rd.name}",
                fault_type=fault,
                root_cause=root,
                inject_time=t0,
                alert_window=aw,
                baseline_window=bw,
                symptom_service=entry_service(edges, services),
                services=services,
                call_edges=tuple(CallEdge(c, s) for c, s in edges),
                metrics=tuple(cut(_signals(times, cols, services, edges), bw[0], aw[1])),
                changes=(),
                manifests="sock-shop",
                timeline=f"{svc_fault}/{rd.name}",
            )
        )
    return cases
