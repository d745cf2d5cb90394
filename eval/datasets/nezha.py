"""Nezha (FSE'23) Online Boutique cases: 56 injected faults over two days, 1-minute metrics.

Layout, fault list, pod signals and what is left out: `_nezha_format` (shared with the
Train Ticket adapter). Besides, per date: ``dependency.csv``, ``source_50.csv``,
``destination_50.csv``.

* Root cause = the injected pod's service. Windows: the shared rule in ``_common`` on one
  timeline over both days. Faults are 7-9 min apart, so the alert window is clipped at the
  next fault and the baseline is the ~3 min between the previous fault's effect and this
  fault. ``timeline`` = the date: the cases of a day are cut from that day's recording.
* Services: the 10 pods with metric files (one pod each).
* Edges: the 14 service->service rows of ``dependency.csv`` (rows to node IPs and from
  ``loadgenerator`` are placement, not calls). ``latency_client`` (s) = ``source_50.csv``
  (measured at the caller; network_delay faults show here, x30-x250, and not at the
  callee), ``latency_server`` (s) = ``destination_50.csv`` (at the callee). Both are the
  per-minute *median* of the edge (the data has no per-edge p95). ``requests`` (req/s) =
  the callee's ``PodWorkload(Ops)`` split evenly among its callers
  (``_common.spread_to_callers``). No per-edge error signal exists: no ``errors``.
* Entry edge ``user -> frontend`` (the graph's entry service): ``front_service.csv`` gives
  ``latency_server`` = ``latency_client`` = ``LatencyP95(s)``; ``requests`` = the
  frontend's ``PodWorkload(Ops)``. Its ``errors`` = 1 - ``SuccessRate(%)`` / 100 is the
  frontend's own report (``SERVICE_SIGNALS``), not the entry edge's: no call's failures
  were recorded, and a Tempo series of them would say every call below succeeded. Its
  P50/P90/P99 are left out.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._common import (
    entry_service,
    read_csv,
    spread_to_callers,
)
from ._nezha_format import Day, cases, front_kpi, read_pods, read_table
from .model import Case, series

NAME = "nezha"


def _edge_table(path: Path) -> tuple[np.ndarray, dict[tuple[str, str], np.ndarray]]:
    times, cols = read_table(path, "time")
    out = {}
    for name, vals in cols.items():
        if "_" in name:
            c, s = name.split("_", 1)
            out[(c, s)] = vals
    return times, out


def _load_day(root: Path, date: str) -> Day:
    metric_dir = root / "rca_data" / date / "metric"
    pods = read_pods(metric_dir)
    out, workload, services = list(pods.series), pods.workload, pods.services
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
    out.extend(front_kpi(metric_dir, entry, edges))
    return Day(services, edges, entry, out, pods.start, pods.end)


def load(path: Path) -> list[Case]:
    """Load every Nezha OB case under ``path`` (the ``nezha`` dataset folder)."""
    return cases(Path(path), NAME, "online-boutique", _load_day)
