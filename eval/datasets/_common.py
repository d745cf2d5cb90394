"""Helpers shared by the dataset adapters: the window rule, file reading, series building.

Window rule (identical for every dataset; only the data decides where it is clipped)
-----------------------------------------------------------------------------------
Let ``t0`` be a case's fault start, ``t_next`` the next fault start and ``t_prev`` the previous
fault start on the same dataset timeline. All windows are half-open ``[start, end)``.

* alert window    = ``[t0, min(t0 + ALERT_SPAN_S, t_next, data_end))``.
  It never reaches the next fault. ALERT_SPAN_S (10 min) is long enough to contain the
  alert in every case (ChangeRCA detects up to 8.3 min after the first release) and is
  clipped anyway by Nezha's ~8 min fault spacing and RCD's ~5 min anomalous recordings.
* baseline window = ``[max(t0 - BASELINE_SPAN_S, t_prev + PREV_GUARD_S, data_start), t0)``,
  i.e. the last 20 min of fault-free data before the fault, skipping the first
  PREV_GUARD_S (5 min) after the previous fault, which is where its effect lives (in Nezha
  the injected faults visibly last 3-6 min). If that leaves less than MIN_BASELINE_S the
  guard is dropped and the baseline is ``[t0 - MIN_BASELINE_S, t0)`` (clipped to the data):
  a short overlap with the previous fault's tail beats an empty baseline.
  For RCD, whose fault-free data is a separate earlier recording, "data before t0" is that
  recording, so the same rule takes its last 20 min (the whole file).

None of these constants looks at labels; they are fixed from the data's time structure.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from .model import CallEdge, DatasetError, MetricSeries

ALERT_SPAN_S = 600.0
BASELINE_SPAN_S = 1200.0
PREV_GUARD_S = 300.0
MIN_BASELINE_S = 120.0


def alert_window(t0: float, t_next: float | None, data_end: float) -> tuple[float, float]:
    """The alert window of a fault starting at ``t0`` (see module docstring)."""
    end = min(t0 + ALERT_SPAN_S, data_end)
    if t_next is not None:
        end = min(end, t_next)
    return (float(t0), float(max(end, t0)))


def baseline_window(t0: float, t_prev: float | None, data_start: float) -> tuple[float, float]:
    """The baseline window before a fault starting at ``t0`` (see module docstring)."""
    start = max(t0 - BASELINE_SPAN_S, data_start)
    if t_prev is not None:
        start = max(start, t_prev + PREV_GUARD_S)
    if t0 - start < MIN_BASELINE_S:
        start = max(min(start, t0 - MIN_BASELINE_S), data_start)
    return (float(min(start, t0)), float(t0))


def neighbours(times: Sequence[float]) -> list[tuple[float | None, float | None]]:
    """For each fault start, the previous and next *other* fault start on the timeline."""
    order = sorted(set(times))
    out: list[tuple[float | None, float | None]] = []
    for t in times:
        i = order.index(t)
        prev = order[i - 1] if i > 0 else None
        nxt = order[i + 1] if i + 1 < len(order) else None
        out.append((prev, nxt))
    return out


def open_text(path: Path) -> io.TextIOBase:
    """Open ``path`` or, if absent, ``path.gz`` as text (datasets are stored gzipped)."""
    if path.exists():
        if path.suffix == ".gz":
            return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
        return open(path, encoding="utf-8", newline="")
    gz = path.with_name(path.name + ".gz")
    if gz.exists():
        return io.TextIOWrapper(gzip.open(gz, "rb"), encoding="utf-8", newline="")
    raise DatasetError(f"missing file {path} (or {gz.name})")


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a (possibly gzipped) CSV file."""
    with open_text(path) as fh:
        reader: Iterator[list[str]] = csv.reader(fh)
        try:
            header = next(reader)
        except StopIteration:
            raise DatasetError(f"empty CSV file {path}") from None
        rows = [r for r in reader if r]
    return header, rows


def to_float(s: str) -> float:
    """Parse a CSV cell; blanks and junk become NaN."""
    try:
        return float(s)
    except ValueError:
        return math.nan


_DAY_CACHE: dict[str, float] = {}


def parse_go_time(s: str) -> float:
    """Epoch seconds of a Go time string like ``2022-08-22 03:51:19.607 +0000 UTC m=+0.1``."""
    day = s[:10]
    base = _DAY_CACHE.get(day)
    if base is None:
        base = datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC).timestamp()
        _DAY_CACHE[day] = base
    hh, mm, ss = int(s[11:13]), int(s[14:16]), int(s[17:19])
    frac = 0.0
    if len(s) > 19 and s[19] == ".":
        end = s.find(" ", 19)
        frac = float(s[19 : end if end > 0 else len(s)])
    return base + hh * 3600 + mm * 60 + ss + frac


def parse_utc(s: str) -> float:
    """Epoch seconds of ``YYYY-MM-DD HH:MM:SS`` read as UTC."""
    return datetime.strptime(s.strip()[:19], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC).timestamp()


def require_dir(path: Path, what: str) -> Path:
    """``path`` if it is a directory, else a DatasetError naming what was expected there."""
    if not path.is_dir():
        raise DatasetError(f"{what}: directory {path} does not exist")
    return path


def slice_series(
    service: str,
    name: str,
    kind: str,
    times: np.ndarray,
    values: np.ndarray,
    start: float,
    end: float,
) -> MetricSeries | None:
    """The finite points of a series inside ``[start, end)``, or None if there are none."""
    mask = (times >= start) & (times < end) & np.isfinite(values)
    if not mask.any():
        return None
    order = np.argsort(times[mask], kind="stable")
    return MetricSeries(
        service=service,
        name=name,
        kind=kind,
        times=np.ascontiguousarray(times[mask][order], dtype=np.float64),
        values=np.ascontiguousarray(values[mask][order], dtype=np.float64),
    )


def entry_service(edges: Iterable[tuple[str, str]], services: Sequence[str]) -> str:
    """The call graph's entry point: no callers among ``services``, most callees.

    Uses only the graph, never the label, so it is a fair "where the alert fires" choice.
    """
    callers: dict[str, int] = {s: 0 for s in services}
    callees: dict[str, int] = {s: 0 for s in services}
    for c, s in edges:
        if c in callers and s in callees:
            callers[c] += 1
            callees[s] += 1
    roots = [s for s in services if callees[s] == 0 and callers[s] > 0]
    if not roots:
        raise DatasetError("call graph has no entry service (every service has a caller)")
    return sorted(roots, key=lambda s: (-callers[s], s))[0]


EDGE_SERIES_PREFIX = "from:"
"""Per-edge series are served as metrics of the *callee* named ``from:<caller>`` (kinds
``latency``/``errors``), the shape Tempo's service-graph metrics have in Prometheus
(``{client, server}``); the read path (``rca.signals.EDGE_PREFIX``) reads them as edge facts."""


def edge_series_name(caller: str) -> str:
    """The series name of the edge ``caller -> <this service>``."""
    return f"{EDGE_SERIES_PREFIX}{caller}"


def window_values(times: np.ndarray, values: np.ndarray, win: tuple[float, float]) -> np.ndarray:
    """Finite values of a series inside a window."""
    mask = (times >= win[0]) & (times < win[1]) & np.isfinite(values)
    return values[mask]


def make_edge(
    client: str,
    server: str,
    trace_count: float,
    error_rate: float,
    latency_p95_ms: float | None,
) -> CallEdge:
    """A CallEdge with NaNs and out-of-range values cleaned."""
    tc = trace_count if math.isfinite(trace_count) else 0.0
    er = error_rate if math.isfinite(error_rate) else 0.0
    lat = latency_p95_ms if latency_p95_ms is not None and math.isfinite(latency_p95_ms) else None
    return CallEdge(client, server, max(tc, 0.0), min(max(er, 0.0), 1.0), lat)
