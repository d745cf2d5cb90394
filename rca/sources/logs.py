"""Read-time log sources: a service's log lines in a window, from Loki or from files.

    logs = logs_from_settings(settings)         # LokiLogs, FileLogs, or None
    logs.lines("checkout", start, end)           # [LogLine(t, service, level, text, ...)]

`LokiLogs` asks `/loki/api/v1/query_range` with a constant selector template (the service
name bound as a quoted label value). `FileLogs` reads a folder once: JSON Lines as
`logcli --output jsonl` writes them (`timestamp`, `labels`, `line`) or CSV with a header
(time: `timestamp`/`TimeUnixNano`; service: `service`/`service_name`, else the workload of
`pod`/`PodName`; text: `line`/`log`/`Log`; optional `TraceID`, `SpanID`), plain or gzipped.
A line whose text is a container runtime's JSON (`{"log": "..."}`) is unwrapped. The level
is a `level=` field, else the first level word in capitals (`level_of`), or "".
"""

from __future__ import annotations

import bisect
import csv
import gzip
import io
import json
import re
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from stackgraph.config import Settings
from stackgraph.errors import ConfigError, InputError, SourceUnavailable
from stackgraph.podnames import pod_base_names
from stackgraph.prometheus import JsonApiClient
from stackgraph.promql import label_value

from ..model import LogLine, LogSource

__all__ = ["FileLogs", "LokiLogs", "level_of", "logs_from_settings"]

MAX_LINES = 5000
"""Lines read per service and window: enough for rates and templates, bounded for memory."""
_LEVEL = re.compile(r"\b(TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL|PANIC|SEVERE)\b")
_KEYED = re.compile(r"""\b(?:level|severity|lvl)["']?\s*[:=]\s*["']?([A-Za-z]+)""", re.I)
_ALIASES = {"WARNING": "WARN", "CRITICAL": "FATAL", "PANIC": "FATAL", "SEVERE": "ERROR",
            "ERR": "ERROR", "CRIT": "FATAL", "EMERG": "FATAL", "ALERT": "FATAL"}  # fmt: skip


def level_of(text: str) -> str:
    """A line's level: a `level=`/`"level":` field (logfmt, JSON), else the first level word
    in capitals (ERROR, WARN, INFO, ...); WARNING reads as WARN. "" when there is none."""
    head = text[:300]
    keyed = _KEYED.search(head)
    word = keyed.group(1).upper() if keyed else None
    if word is None:
        m = _LEVEL.search(head)
        word = m.group(1) if m else ""
    return _ALIASES.get(word, word)


def _unwrap(text: str) -> str:
    if text.startswith("{") and '"log"' in text[:20]:
        try:
            inner = json.loads(text)
        except ValueError:
            return text
        if isinstance(inner, dict) and isinstance(inner.get("log"), str):
            return str(inner["log"]).rstrip("\n")
    return text


def _line(t: float, service: str, text: str, trace: str = "", span: str = "") -> LogLine:
    body = _unwrap(text)
    return LogLine(t, service, level_of(body), body, trace, span)


class LokiLogs:
    """`LogSource` over Loki's HTTP API."""

    def __init__(self, url: str, selector: str = "{service_name=<<service>>}",
                 timeout_s: float = 10.0) -> None:  # fmt: skip
        if "<<service>>" not in selector:
            raise ConfigError(f"logs_selector {selector!r} lacks <<service>>")
        self.client = JsonApiClient(url, "Loki", timeout_s)
        self.selector = selector
        self.where = "Loki"

    def lines(self, service: str, start: float, end: float) -> Sequence[LogLine]:
        query = self.selector.replace("<<service>>", label_value(service))
        data = self.client.get("/loki/api/v1/query_range", {
            "query": query, "start": str(int(start * 1e9)), "end": str(int(end * 1e9)),
            "limit": str(MAX_LINES), "direction": "forward",
        })  # fmt: skip
        if not isinstance(data, dict) or data.get("resultType") != "streams":
            raise SourceUnavailable(f"Loki at {self.client.url} answered an unexpected result")
        out: list[LogLine] = []
        for stream in data.get("result", []):
            labels = stream.get("stream") or {}
            for ts, text in stream.get("values", []):
                out.append(_line(int(ts) / 1e9, service, str(text), str(labels.get("trace_id", "")),
                                 str(labels.get("span_id", ""))))  # fmt: skip
        return sorted(out, key=lambda x: x.t)[:MAX_LINES]


_FRACTION = re.compile(r"(\.\d{6})\d+")


def _epoch(value: str) -> float:
    """Epoch seconds of nanoseconds, seconds or RFC 3339 (nanosecond digits allowed)."""
    text = value.strip()
    if text.isdigit():
        n = int(text)
        return n / 1e9 if n > 1e15 else float(n)
    return datetime.fromisoformat(_FRACTION.sub(r"\1", text.replace("Z", "+00:00"))).timestamp()


def _service_of(labels: dict[str, Any]) -> str:
    for key in ("service", "service_name", "app", "job", "container"):
        if labels.get(key):
            return str(labels[key])
    pod = str(labels.get("pod") or labels.get("PodName") or "")
    bases = pod_base_names(pod)
    return bases[0] if bases else pod


def _read(path: Path) -> str:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8", "replace")


class FileLogs:
    """`LogSource` over a folder of log files, read once and indexed by service and time."""

    def __init__(self, folder: Path) -> None:
        if not folder.is_dir():
            raise InputError(f"log folder {folder} does not exist")
        self.folder = folder
        self.where = "log files"
        by: dict[str, list[LogLine]] = defaultdict(list)
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            name = path.name.removesuffix(".gz")
            if name.endswith((".jsonl", ".ndjson")):
                rows = self._jsonl(path)
            elif name.endswith(".csv"):
                rows = self._csv(path)
            else:
                continue
            for line in rows:
                by[line.service].append(line)
        self._lines = {s: sorted(v, key=lambda x: x.t) for s, v in by.items()}
        self._times = {s: [x.t for x in v] for s, v in self._lines.items()}

    def _jsonl(self, path: Path) -> list[LogLine]:
        out = []
        for n, text in enumerate(_read(path).splitlines(), 1):
            if not text.strip():
                continue
            try:
                doc = json.loads(text)
                labels = dict(doc.get("labels") or {})
                out.append(_line(_epoch(str(doc["timestamp"])), _service_of(labels),
                                 str(doc["line"]), str(labels.get("trace_id", "")),
                                 str(labels.get("span_id", ""))))  # fmt: skip
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise InputError(f"{path}:{n}: not a logcli JSON line ({exc})") from exc
        return out

    def _csv(self, path: Path) -> list[LogLine]:
        reader = csv.reader(io.StringIO(_read(path)))
        header = next(reader, [])
        cols: dict[str, int] = {}
        for i, c in enumerate(header):
            cols.setdefault(c.strip().lower().replace("_", ""), i)

        def col(*names: str) -> int | None:
            return next((cols[n] for n in names if n in cols), None)

        def first(row: list[str], *names: str) -> str:
            """The first non-empty of these columns, as `a or b` over the named fields."""
            return next((row[cols[n]] for n in names
                         if n in cols and cols[n] < len(row) and row[cols[n]]), "")  # fmt: skip

        t_col, text_col = col("timeunixnano", "timestamp", "time"), col("line", "log", "message")
        if t_col is None or text_col is None:
            raise InputError(f"{path}: CSV header lacks a time or a text column")
        services: dict[tuple[str, str], str] = {}  # (service, pod) → service: pods repeat
        out = []
        for row in reader:
            if not row:
                continue
            service, pod = first(row, "service", "servicename"), first(row, "podname", "pod")
            trace, span = first(row, "traceid"), first(row, "spanid")
            try:
                t = _epoch(row[t_col])
            except (ValueError, IndexError) as exc:
                raise InputError(f"{path}:{reader.line_num}: {exc}") from exc
            who = services.get((service, pod))
            if who is None:
                who = services[(service, pod)] = _service_of({"service": service, "pod": pod})
            text = row[text_col] if text_col < len(row) else ""
            out.append(_line(t, who, text, trace, span))
        return out

    def lines(self, service: str, start: float, end: float) -> Sequence[LogLine]:
        times = self._times.get(service, [])
        lo, hi = bisect.bisect_left(times, start), bisect.bisect_right(times, end)
        return self._lines[service][lo:hi][:MAX_LINES] if times else []


def logs_from_settings(settings: Settings) -> LogSource | None:
    """Loki when `loki_url` is set, else the files under `logs_path`, else None."""
    if settings.loki_url:
        return LokiLogs(settings.loki_url, settings.logs_selector, settings.telemetry_timeout_s)
    if settings.logs_path is not None:
        return FileLogs(settings.logs_path)
    return None
