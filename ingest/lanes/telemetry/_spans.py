"""The offline source: span files, read into `Span`s that `_pairing` turns into the pair
statistics Tempo would emit.

Formats: OTLP JSON (an `ExportTraceServiceRequest`, one per file or one per line as the
Collector's file exporter writes), Jaeger JSON (the query API / UI download: `{"data":
[trace...]}`) and CSV (one span a row; `_span_csv`), plain or gzipped (`.gz`).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stackgraph.errors import InputError

from ..folder import files_under
from ._span import Span
from ._span_csv import parse_csv

__all__ = ["load_spans", "parse_jaeger", "parse_otlp"]

_OTLP_KINDS = {1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}


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


# -- files ------------------------------------------------------------------------------


def _parse_json_doc(doc: Any, origin: str) -> list[Span]:
    if isinstance(doc, dict) and "resourceSpans" in doc:
        return parse_otlp(doc, origin)
    if (isinstance(doc, dict) and ("data" in doc or "spans" in doc)) or isinstance(doc, list):
        return parse_jaeger(doc, origin)
    raise InputError(f"{origin}: neither OTLP JSON (resourceSpans) nor Jaeger JSON (data)")


def _parse_file(path: Path) -> list[Span]:
    try:
        raw = path.read_bytes()
        text = (gzip.decompress(raw) if path.suffix.lower() == ".gz" else raw).decode("utf-8")
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read span file {path}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"span file {path} is not UTF-8 text: {exc.reason}") from exc
    if path.name.lower().removesuffix(".gz").endswith(".csv"):
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
                msg = f"span file {path}:{n} is nested deeper than JSON is read"
                raise InputError(msg) from None
            except json.JSONDecodeError:
                raise InputError(
                    f"span file {path}:{whole.lineno}:{whole.colno} is not JSON: {whole.msg}"
                ) from whole
            out.extend(_parse_json_doc(doc, f"{path}:{n}"))
        return out


_SUFFIXES = (".json", ".jsonl", ".ndjson", ".csv")


def _is_span_file(path: Path) -> bool:
    return path.name.lower().removesuffix(".gz").endswith(_SUFFIXES)


def load_spans(path: Path) -> list[Span]:
    """Every span in a file, or in a folder's `.json`, `.jsonl`, `.ndjson`, `.csv` files
    (each may be gzipped)."""
    if path.is_dir():
        files, outside = files_under(path, _is_span_file)
        if outside:
            raise InputError(f"span file {outside[0]} is a symlink out of {path}; not read")
        if not files:
            raise InputError(
                f"span folder {path} holds no {', '.join(_SUFFIXES)} files (plain or .gz)"
            )
    elif path.is_file():
        files = [path]
    else:
        raise InputError(f"span path {path} does not exist")
    return [span for f in files for span in _parse_file(f)]
