"""The offline source: span files turned into the same pair statistics Tempo would emit.

Formats: OTLP JSON (an `ExportTraceServiceRequest`, one per file or one per line as the
Collector's file exporter writes), Jaeger JSON (the query API / UI download: `{"data":
[trace...]}`) and CSV (one span a row; columns below). Pairing follows Tempo's service
graph processor:

- a CLIENT (or PRODUCER) span whose child SERVER (or CONSUMER) span is in another service
  is one request `client -> server` (`messaging_system` for producer/consumer);
- a root SERVER/CONSUMER span is a request from the virtual client `user`;
- a CLIENT span without a server child but with database attributes (`db.namespace`,
  `db.name`, `db.system`) is a `database` request to the node named by `peer.service`,
  `server.address`, `network.peer.address[:port]`, `db.namespace` or `db.name`;
  with a peer attribute (`peer.service`, `db.name`, `db.system`) it is a request to a
  virtual server of that name;
- a request failed when either span has an error status; its latency is the server span's
  duration (the client span's when the server is virtual).

CSV columns: `trace_id, span_id, parent_span_id, service, kind, duration_ms` (required),
`start_unix_s`, `status` (`error`/`ok`); any other column is a span attribute
(`peer.service`, `db.system`, `messaging.destination.name`, ...).
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from stackgraph.errors import InputError

from ..folder import files_under
from ._edges import USER_CLIENT, EdgeStat

__all__ = ["Span", "load_spans", "parse_csv", "parse_jaeger", "parse_otlp", "stats_from_spans"]

_OTLP_KINDS = {1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
_DB_MARKERS = ("db.namespace", "db.name", "db.system")
_DB_NAME_ORDER = (
    "peer.service",
    "server.address",
    "network.peer.address",
    "db.namespace",
    "db.name",
)
_PEER_ATTRIBUTES = ("peer.service", "db.name", "db.system")
_SUBJECT_ATTRIBUTES = ("messaging.destination.name", "messaging.destination")


@dataclass(frozen=True)
class Span:
    """The part of a span the service graph needs."""

    trace_id: str
    span_id: str
    parent_id: str
    service: str
    kind: str
    """client, server, producer, consumer, internal or ""."""
    duration_ms: float
    end_s: float = 0.0
    error: bool = False
    attributes: Mapping[str, str] = field(default_factory=dict)


# -- OTLP JSON --------------------------------------------------------------------------


def _any_value(value: Any) -> str:
    if not isinstance(value, dict):
        return "" if value is None else str(value)
    for key in ("stringValue", "intValue", "doubleValue"):
        if key in value:
            return str(value[key])
    if "boolValue" in value:
        return "true" if value["boolValue"] else "false"
    return json.dumps(value, sort_keys=True)


def _otlp_attrs(items: Any) -> dict[str, str]:
    if not isinstance(items, list):
        return {}
    return {str(a.get("key")): _any_value(a.get("value")) for a in items if isinstance(a, dict)}


def _otlp_kind(kind: Any) -> str:
    if isinstance(kind, int):
        return _OTLP_KINDS.get(kind, "")
    text = str(kind or "").upper().removeprefix("SPAN_KIND_")
    return text.lower() if text.lower() in _OTLP_KINDS.values() else ""


def _otlp_error(status: Any) -> bool:
    code = status.get("code") if isinstance(status, dict) else None
    return code == 2 or str(code).upper() in ("STATUS_CODE_ERROR", "ERROR", "2")


def parse_otlp(doc: Mapping[str, Any], origin: str) -> list[Span]:
    """Spans of one OTLP JSON `ExportTraceServiceRequest`."""
    out: list[Span] = []
    for i, rs in enumerate(doc.get("resourceSpans") or []):
        resource = _otlp_attrs((rs.get("resource") or {}).get("attributes"))
        service = resource.get("service.name", "")
        scopes = rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []
        for j, ss in enumerate(scopes):
            for k, sp in enumerate(ss.get("spans") or []):
                where = f"{origin}: resourceSpans[{i}].scopeSpans[{j}].spans[{k}]"
                try:
                    start = int(sp["startTimeUnixNano"])
                    end = int(sp["endTimeUnixNano"])
                    span = Span(
                        trace_id=str(sp["traceId"]),
                        span_id=str(sp["spanId"]),
                        parent_id=str(sp.get("parentSpanId") or ""),
                        service=service,
                        kind=_otlp_kind(sp.get("kind")),
                        duration_ms=(end - start) / 1e6,
                        end_s=end / 1e9,
                        error=_otlp_error(sp.get("status")),
                        attributes=_otlp_attrs(sp.get("attributes")),
                    )
                except KeyError as exc:
                    raise InputError(f"{where}: missing {exc.args[0]}") from exc
                except (TypeError, ValueError) as exc:
                    raise InputError(f"{where}: {exc}") from exc
                out.append(span)
    return out


# -- Jaeger JSON ------------------------------------------------------------------------


def _jaeger_tags(items: Any) -> dict[str, str]:
    if not isinstance(items, list):
        return {}
    out: dict[str, str] = {}
    for tag in items:
        if isinstance(tag, dict) and "key" in tag:
            value = tag.get("value")
            out[str(tag["key"])] = (
                ("true" if value else "false") if isinstance(value, bool) else str(value)
            )
    return out


def _jaeger_trace(trace: Mapping[str, Any], where: str) -> list[Span]:
    processes = trace.get("processes") or {}
    out: list[Span] = []
    for k, sp in enumerate(trace.get("spans") or []):
        at = f"{where}.spans[{k}]"
        try:
            tags = _jaeger_tags(sp.get("tags"))
            parent = str(sp.get("parentSpanID") or "")
            for ref in sp.get("references") or []:
                if ref.get("refType") in ("CHILD_OF", "FOLLOWS_FROM") and not parent:
                    parent = str(ref["spanID"])
            process = sp.get("process") or processes.get(sp.get("processID"), {})
            start_us, dur_us = int(sp["startTime"]), int(sp["duration"])
            status = tags.get("otel.status_code", "").upper()
            out.append(
                Span(
                    trace_id=str(sp["traceID"]),
                    span_id=str(sp["spanID"]),
                    parent_id=parent,
                    service=str(process.get("serviceName", "")),
                    kind=tags.get("span.kind", "").lower(),
                    duration_ms=dur_us / 1000.0,
                    end_s=(start_us + dur_us) / 1e6,
                    error=tags.get("error") == "true" or status == "ERROR",
                    attributes=tags,
                )
            )
        except KeyError as exc:
            raise InputError(f"{at}: missing {exc.args[0]}") from exc
        except (TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"{at}: {exc}") from exc
    return out


def parse_jaeger(doc: Any, origin: str) -> list[Span]:
    """Spans of a Jaeger JSON document: `{"data": [trace...]}`, a trace list, or a trace."""
    if isinstance(doc, dict) and "data" in doc:
        traces, path = doc["data"], "data"
    elif isinstance(doc, list):
        traces, path = doc, ""
    else:
        traces, path = [doc], ""
    out: list[Span] = []
    for i, trace in enumerate(traces or []):
        if not isinstance(trace, dict):
            raise InputError(f"{origin}: {path}[{i}] is not a Jaeger trace object")
        out.extend(_jaeger_trace(trace, f"{origin}: {path}[{i}]"))
    return out


# -- CSV --------------------------------------------------------------------------------

_CSV_REQUIRED = ("trace_id", "span_id", "service", "kind", "duration_ms")
_CSV_OWN = (*_CSV_REQUIRED, "parent_span_id", "start_unix_s", "status")


def parse_csv(text: str, origin: str) -> list[Span]:
    """Spans of a CSV file with a header row (columns in the module docstring)."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in _CSV_REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(f"{origin}: CSV header lacks column(s) {', '.join(missing)}")
    out: list[Span] = []
    for row in reader:
        where = f"{origin}:{reader.line_num}"
        try:
            duration = float(row["duration_ms"])
            start = float(row.get("start_unix_s") or 0.0)
        except ValueError as exc:
            raise InputError(f"{where}: {exc}") from exc
        kind = (row["kind"] or "").strip().lower().removeprefix("span_kind_")
        attrs = {k: v for k, v in row.items() if k not in _CSV_OWN and k and v}
        out.append(
            Span(
                trace_id=row["trace_id"],
                span_id=row["span_id"],
                parent_id=row.get("parent_span_id") or "",
                service=row["service"],
                kind=kind,
                duration_ms=duration,
                end_s=start + duration / 1000.0 if start else 0.0,
                error=(row.get("status") or "").strip().lower()
                in ("error", "status_code_error", "2", "true"),
                attributes=attrs,
            )
        )
    return out


# -- files ------------------------------------------------------------------------------


def _parse_json_doc(doc: Any, origin: str) -> list[Span]:
    if isinstance(doc, dict) and "resourceSpans" in doc:
        return parse_otlp(doc, origin)
    if (isinstance(doc, dict) and ("data" in doc or "spans" in doc)) or isinstance(doc, list):
        return parse_jaeger(doc, origin)
    raise InputError(f"{origin}: neither OTLP JSON (resourceSpans) nor Jaeger JSON (data)")


def _parse_file(path: Path) -> list[Span]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read span file {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"span file {path} is not UTF-8 text: {exc.reason}") from exc
    if path.suffix.lower() == ".csv":
        return parse_csv(text, str(path))
    try:
        return _parse_json_doc(json.loads(text), str(path))
    except RecursionError:
        raise InputError(f"span file {path} is nested deeper than JSON is read") from None
    except json.JSONDecodeError as whole:
        # JSON Lines: one export request per line (the Collector's file exporter)
        out: list[Span] = []
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
            except RecursionError:
                raise InputError(
                    f"span file {path}:{n} is nested deeper than JSON is read"
                ) from None
            except json.JSONDecodeError:
                raise InputError(
                    f"span file {path}:{whole.lineno}:{whole.colno} is not JSON: {whole.msg}"
                ) from whole
            out.extend(_parse_json_doc(doc, f"{path}:{n}"))
        return out


_SUFFIXES = (".json", ".jsonl", ".ndjson", ".csv")


def load_spans(path: Path) -> list[Span]:
    """Every span in a file, or in a folder's `.json`, `.jsonl`, `.ndjson`, `.csv` files."""
    if path.is_dir():
        files, outside = files_under(path, _SUFFIXES)
        if outside:
            raise InputError(f"span file {outside[0]} is a symlink out of {path}; not read")
        if not files:
            raise InputError(f"span folder {path} holds no {', '.join(_SUFFIXES)} files")
    elif path.is_file():
        files = [path]
    else:
        raise InputError(f"span path {path} does not exist")
    return [span for f in files for span in _parse_file(f)]


# -- pairing ----------------------------------------------------------------------------


def _first(attrs: Mapping[str, str], names: Iterable[str]) -> str:
    for name in names:
        value = attrs.get(name)
        if value:
            if name == "network.peer.address" and attrs.get("network.peer.port"):
                return f"{value}:{attrs['network.peer.port']}"
            return value
    return ""


@dataclass
class _Pair:
    count: int = 0
    failed: int = 0
    durations: list[float] = field(default_factory=list)


def stats_from_spans(spans: Sequence[Span]) -> tuple[list[EdgeStat], float]:
    """Pair spans as Tempo's service graph does; return the pair stats and the last end time."""
    by_id = {(s.trace_id, s.span_id): s for s in spans}
    has_child: set[tuple[str, str]] = set()
    pairs: dict[tuple[str, str, str, str, str], _Pair] = defaultdict(_Pair)

    def record(key: tuple[str, str, str, str, str], error: bool, duration_ms: float) -> None:
        pair = pairs[key]
        pair.count += 1
        pair.failed += int(error)
        pair.durations.append(duration_ms)

    for span in spans:
        if span.kind not in ("server", "consumer") or not span.service:
            continue
        subject = _first(span.attributes, _SUBJECT_ATTRIBUTES)
        parent = by_id.get((span.trace_id, span.parent_id)) if span.parent_id else None
        if not span.parent_id:
            key = (USER_CLIENT, span.service, "virtual_node", "client", subject)
            record(key, span.error, span.duration_ms)
            continue
        if parent is None or parent.kind not in ("client", "producer"):
            continue
        has_child.add((parent.trace_id, parent.span_id))
        if parent.service == span.service or not parent.service:
            continue
        messaging = parent.kind == "producer" or span.kind == "consumer"
        database = any(parent.attributes.get(a) for a in _DB_MARKERS)
        ctype = "messaging_system" if messaging else "database" if database else ""
        subject = subject or _first(parent.attributes, _SUBJECT_ATTRIBUTES)
        key = (parent.service, span.service, ctype, "", subject if messaging else "")
        record(key, parent.error or span.error, span.duration_ms)

    for span in spans:
        if span.kind != "client" or (span.trace_id, span.span_id) in has_child:
            continue
        if any(span.attributes.get(a) for a in _DB_MARKERS):
            name = _first(span.attributes, _DB_NAME_ORDER)
            if name:
                record((span.service, name, "database", "server", ""), span.error, span.duration_ms)
                continue
        peer = _first(span.attributes, _PEER_ATTRIBUTES)
        if peer and span.service:
            record((span.service, peer, "virtual_node", "server", ""), span.error, span.duration_ms)

    stats = [
        EdgeStat(
            client=c,
            server=s,
            trace_count=p.count,
            error_rate=p.failed / p.count,
            latency_p95_ms=float(np.percentile(p.durations, 95)),
            connection_type=ctype,
            virtual_node=virtual,
            subject=subject,
        )
        for (c, s, ctype, virtual, subject), p in sorted(pairs.items())
    ]
    seen_at = max((s.end_s for s in spans), default=0.0)
    return stats, seen_at
