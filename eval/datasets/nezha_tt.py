"""Nezha (FSE'23) Train Ticket cases: metrics, spans and logs; any day in that layout.

Layout, fault list, pod signals and what is left out: `_nezha_format`. Besides, per date,
``rca_data/<date>/trace/HH_MM_trace.csv[.gz]`` (spans starting in the minute ending at
HH:MM: three minutes per fault), ``log/HH_MM_log.csv[.gz]`` (the log lines of those minutes,
each with the trace and span it was written in) and, in ``construct_data/<date>/``, the same
for fault-free minutes.

* Root cause = the injected pod's service; windows: the shared rule in ``_common`` (faults
  follow each other within minutes); ``timeline`` = the date.
* Call graph and edge series come from the spans, read and paired by the telemetry lane's
  own span reader (`load_spans`, `stats_from_spans`: spans carry no kind, so a child span in
  another service than its parent's is the call). Per minute file and edge: ``requests``
  (calls / 60 s), ``latency_server`` (p95 of the callee's spans, s) and ``latency_client``
  (p95 of their parents, the caller's exit spans: ``HTTP GET``/``POST`` ..., the call as
  the caller waited for it, network included, as Tempo's client histogram holds it; a
  producer's span where the call is a message). The spans carry no status, so no
  ``errors`` (the logs hold them). Spans exist only around each fault and in
  the fault-free minutes, so edge series have no baseline elsewhere; the call graph is
  every pair seen on the day.
* Entry: the service of the root spans (the graph's entry) gets the edge ``user -> entry``
  from ``front_service.csv`` every minute (not from its root spans, which cover three minutes
  a fault): both latencies = ``LatencyP95(s)``; ``requests`` = its ``PodWorkload(Ops)``; its
  ``SuccessRate(%)`` is 0 throughout the shared day (no measurement: left out; another
  day's would be the entry's own report, ``SERVICE_SIGNALS``, as on Online Boutique).
* Logs: every line of the known services as Loki would hold it (``LogRecord``: time, service,
  the raw line, trace and span id), read at investigation time through the log source;
  like the spans, they exist only around each fault and in the fault-free minutes.
* Services: the pods with metric files (one pod each); spans and lines of other services
  (none on the shared day) are left out.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from stackgraph.errors import InputError
from stackgraph.ingest.lanes.telemetry import Span, load_spans, stats_from_spans

from ._common import (
    bad_cell,
    entry_service,
    read_csv,
    spread_to_callers,
)
from ._nezha_format import Day, cases, front_kpi, pod_to_service, read_pods
from .model import USER, Case, DatasetError, LogRecord, MetricSeries, series

NAME = "nezha-tt"
MANIFESTS = "train-ticket/nezha-augmented"
_MINUTE_FILE = re.compile(r"^(?P<h>\d\d)_(?P<m>\d\d)_(trace|log)\.csv(\.gz)?$")


def _minute_files(folder: Path, date: str) -> list[tuple[float, Path]]:
    """(epoch of the minute's end, file) for every HH_MM trace file of a date folder."""
    day = datetime.strptime(date, "%Y-%m-%d").replace(tzinfo=UTC).timestamp()
    out = []
    for f in sorted(folder.iterdir()) if folder.is_dir() else []:
        m = _MINUTE_FILE.match(f.name)
        if m:
            out.append((day + int(m.group("h")) * 3600 + int(m.group("m")) * 60, f))
    return out


def _span_series(
    files: list[tuple[float, Path]], services: tuple[str, ...]
) -> tuple[list[tuple[str, str]], list[MetricSeries], list[Span]]:
    """The day's call graph, per edge its per-minute requests, the p95 (s) of the callee's
    spans and of the caller's wait (`EdgeStat.waited_p95_ms`), and its spans."""
    points: dict[tuple[str, str], list[tuple[float, float, float, float]]] = defaultdict(list)
    kept: list[Span] = []
    for end, path in files:
        try:
            spans = load_spans(path)
        except InputError as exc:
            raise DatasetError(str(exc)) from exc
        stats, _ = stats_from_spans(spans)
        kept += [s for s in spans if s.service in services]
        for s in stats:
            client = USER if s.client == "user" else s.client
            if s.server in services and (client == USER or client in services):
                p95 = (s.latency_p95_ms or 0.0) / 1000.0
                wait = p95 if s.waited_p95_ms is None else s.waited_p95_ms / 1000.0
                points[(client, s.server)].append((end, s.trace_count / 60.0, p95, wait))
    out: list[MetricSeries] = []
    for (client, server), pts in sorted(points.items()):
        cols = np.array(sorted(pts), dtype=float)
        out.append(series(server, "requests", cols[:, 0], cols[:, 1], client))
        out.append(series(server, "latency_server", cols[:, 0], cols[:, 2], client))
        out.append(series(server, "latency_client", cols[:, 0], cols[:, 3], client))
    edges = sorted(e for e in points if e[0] != USER)
    return edges, out, sorted(kept, key=lambda s: s.end_s)


def _logs(files: list[tuple[float, Path]], services: tuple[str, ...]) -> list[LogRecord]:
    """Every log line of the known services, by the line's own nanosecond time."""
    out: list[LogRecord] = []
    for _, path in files:
        header, rows = read_csv(path)
        try:
            ti, pi, li = (header.index(c) for c in ("TimeUnixNano", "PodName", "Log"))
            tr, sp = header.index("TraceID"), header.index("SpanID")
        except ValueError as exc:
            raise DatasetError(f"{path}: {exc}") from exc
        for n, r in enumerate(rows, start=2):
            svc = pod_to_service(r[pi]) if len(r) > li else ""
            if svc in services:
                try:
                    out.append(LogRecord(int(r[ti]) / 1e9, svc, r[li], r[tr], r[sp]))
                except (IndexError, ValueError) as exc:
                    raise bad_cell(path, n, "TimeUnixNano", r[ti], "nanoseconds", exc) from exc
    return sorted(out, key=lambda x: x.t)


def _load_day(root: Path, date: str) -> Day:
    metric_dir = root / "rca_data" / date / "metric"
    pods = read_pods(metric_dir)
    files = _minute_files(root / "rca_data" / date / "trace", date)
    files += _minute_files(root / "construct_data" / date / "trace", date)
    if not files:
        raise DatasetError(f"{root}: no trace/HH_MM_trace.csv[.gz] files for {date}")
    edges, spans, kept = _span_series(sorted(files), pods.services)
    entry = entry_service(edges, pods.services)
    wt, workload = pods.workload[entry]
    kpi = [*front_kpi(metric_dir, entry, edges),
           *spread_to_callers(entry, edges, wt, requests=workload)]  # fmt: skip
    out = [s for s in spans if s.client != USER]  # the KPI, every minute, stands for them
    log_files = _minute_files(root / "rca_data" / date / "log", date)
    log_files += _minute_files(root / "construct_data" / date / "log", date)
    logs = _logs(log_files, pods.services)
    return Day(pods.services, edges, entry, [*pods.series, *out, *kpi], pods.start, pods.end,
                logs, kept)  # fmt: skip


def load(path: Path) -> list[Case]:
    """Every Train Ticket case under ``path`` (a folder in the Nezha layout)."""
    return cases(Path(path), NAME, MANIFESTS, _load_day)
