"""Helpers shared by the dataset adapters: the window rule, file reading, series building.

Series: an adapter builds each signal once over its whole recording (``model.series``) and
``cut`` gives every case the part inside its ``[baseline start, alert end)``. A service-level
request rate, error share or latency with no per-edge counterpart is put on the service's
incoming call edges by ``spread_to_callers`` (the one place that rule lives).

Window rule (identical for every dataset; only the data decides where it is clipped)
-----------------------------------------------------------------------------------
Let ``t0`` be a case's fault start, ``t_next`` the next fault start and ``t_prev`` the previous
fault start on the same dataset timeline. All windows are half-open ``[start, end)``.

* alert window    = ``[t0, min(t0 + ALERT_SPAN_S, t_next, data_end))``: where this
  incident's alert may fire (the replay looks for it there, `eval/alerting.py`). It never
  reaches the next fault. ALERT_SPAN_S (30 min) only bounds a recording that goes on long
  after its last fault; Nezha's ~8 min fault spacing, ChangeRCA's ~22 min experiments and
  RCD's ~5 min anomalous recordings end it sooner.
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
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from .model import USER, DatasetError, MetricSeries, series

ALERT_SPAN_S = 1800.0
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
    """Header and rows of a (possibly gzipped) CSV file. A file that cannot be read whole
    (cut short, not gzip, not UTF-8, not CSV) is a DatasetError naming it: a bare EOFError
    reads as "Aborted." at the command line, which names nothing."""
    try:
        with open_text(path) as fh:
            reader: Iterator[list[str]] = csv.reader(fh)
            try:
                header = next(reader)
            except StopIteration:
                raise DatasetError(f"empty CSV file {path}") from None
            rows = [r for r in reader if r]
    except (OSError, EOFError, UnicodeDecodeError, csv.Error) as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from exc
    return header, rows


def bad_cell(
    path: Path, row: int, column: str, cell: str, want: str, exc: Exception
) -> DatasetError:
    """The error for one cell that is not what its column holds: file, row (1 is the
    header), column, the cell as found and what was expected."""
    return DatasetError(f"{path}: row {row}: {column} is {cell!r:.60}, not {want} ({exc})")


def read_json(path: Path) -> Any:
    """A label file's JSON; a DatasetError naming it when it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError(f"missing label file {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from exc


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


def callers_of(server: str, edges: Iterable[tuple[str, str]]) -> list[str]:
    """The callers of ``server`` in the call graph, or ``[USER]`` for an entry service."""
    callers = sorted({c for c, s in edges if s == server and c != server})
    return callers or [USER]


def spread_to_callers(
    server: str,
    edges: Iterable[tuple[str, str]],
    times: np.ndarray,
    *,
    requests: np.ndarray | None = None,
    errors: np.ndarray | None = None,
    latency_server: np.ndarray | None = None,
    latency_client: np.ndarray | None = None,
) -> list[MetricSeries]:
    """Edge series for a service-level signal of ``server`` that no edge breaks down.

    Every incoming call edge (``callers_of``: an entry service gets ``USER -> server``)
    gets the same ``errors``, ``latency_server`` and ``latency_client``; ``requests`` is
    split evenly among the callers, so the edges still add up to the service's rate. Each
    is marked ``spread``: its client comes from the stated call graph, not a measurement.
    """
    callers = callers_of(server, edges)
    signals = {
        "requests": None if requests is None else np.asarray(requests, float) / len(callers),
        "errors": errors,
        "latency_server": latency_server,
        "latency_client": latency_client,
    }
    return [
        replace(series(server, name, times, values, client=caller), spread=True)
        for caller in callers
        for name, values in signals.items()
        if values is not None
    ]


def cut(all_series: Iterable[MetricSeries], start: float, end: float) -> list[MetricSeries]:
    """The parts of (sorted, finite) series inside ``[start, end)``; empty parts dropped."""
    out: list[MetricSeries] = []
    for m in all_series:
        i, j = np.searchsorted(m.times, [start, end], side="left")
        if j > i:
            out.append(replace(m, times=m.times[i:j], values=m.values[i:j]))
    return out
