"""Spans as CSV: one span a row, under the column names tracing exports commonly use.

Each field is found under any of its names (case and `_`/spaces ignored):

- trace id: `trace_id`, `TraceID`; span id: `span_id`, `SpanID` (both required);
- parent: `parent_span_id`, `ParentID` (empty or `root`: a root span);
- service: `service`, `ServiceName`; else `pod`, `PodName`, whose workload it is
  (`checkout-7d9f8b7c5d-x2x7z` is `checkout`);
- kind: `kind`, `SpanKind`, optional: without kinds, a child span in another service than
  its parent's is the call (`_pairing`);
- duration: `duration_ms`, else `EndTimeUnixNano` - `StartTimeUnixNano` (required);
- start: `start_unix_s` or `StartTimeUnixNano`; status: `status`, `StatusCode`
  (`error`/`ok`), both optional.

Any other column is a span attribute (`peer.service`, `db.system`, ...).
"""

from __future__ import annotations

import csv
import io

from stackgraph.errors import InputError
from stackgraph.podnames import pod_base_names

from ._span import Span

__all__ = ["parse_csv"]

_FIELDS: dict[str, tuple[str, ...]] = {
    "trace_id": ("traceid",),
    "span_id": ("spanid",),
    "parent": ("parentspanid", "parentid"),
    "service": ("service", "servicename"),
    "pod": ("pod", "podname"),
    "kind": ("kind", "spankind"),
    "duration_ms": ("durationms",),
    "start_s": ("startunixs",),
    "start_ns": ("starttimeunixnano",),
    "end_ns": ("endtimeunixnano",),
    "status": ("status", "statuscode"),
}
_ROOT = ("", "root", "0", "0000000000000000")
_ERROR = ("error", "status_code_error", "2", "true")


def _key(column: str) -> str:
    return column.strip().lower().replace("_", "").replace(" ", "")


def _service(row: dict[str, str], cols: dict[str, str]) -> str:
    if "service" in cols and row.get(cols["service"]):
        return row[cols["service"]]
    pod = row.get(cols["pod"], "") if "pod" in cols else ""
    bases = pod_base_names(pod)
    return bases[0] if bases else pod


def parse_csv(text: str, origin: str) -> list[Span]:
    """Spans of a CSV file with a header row (columns in the module docstring)."""
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    by_key = {_key(c): c for c in header}
    cols = {f: by_key[k] for f, keys in _FIELDS.items() for k in keys if k in by_key}
    missing = [f for f in ("trace_id", "span_id") if f not in cols]
    if "service" not in cols and "pod" not in cols:
        missing.append("service (or pod)")
    if "duration_ms" not in cols and not {"start_ns", "end_ns"} <= set(cols):
        missing.append("duration_ms (or StartTimeUnixNano and EndTimeUnixNano)")
    if missing:
        raise InputError(f"{origin}: CSV header lacks column(s) {', '.join(missing)}")
    own = set(cols.values())
    out: list[Span] = []
    for row in reader:
        where = f"{origin}:{reader.line_num}"
        try:
            if "duration_ms" in cols:
                duration = float(row[cols["duration_ms"]])
                start = float(row.get(cols.get("start_s", ""), "") or 0.0)
                if not start and "start_ns" in cols:
                    start = int(row[cols["start_ns"]] or 0) / 1e9
                end = start + duration / 1000.0 if start else 0.0
            else:
                start_ns, end_ns = int(row[cols["start_ns"]]), int(row[cols["end_ns"]])
                duration, end = (end_ns - start_ns) / 1e6, end_ns / 1e9
        except (TypeError, ValueError) as exc:
            raise InputError(f"{where}: {exc}") from exc
        parent = row.get(cols.get("parent", ""), "") or ""
        kind = (row.get(cols.get("kind", ""), "") or "").strip().lower()
        status = (row.get(cols.get("status", ""), "") or "").strip().lower()
        out.append(
            Span(
                trace_id=row[cols["trace_id"]],
                span_id=row[cols["span_id"]],
                parent_id="" if parent.strip().lower() in _ROOT else parent,
                service=_service(row, cols),
                kind=kind.removeprefix("span_kind_"),
                duration_ms=duration,
                end_s=end,
                error=status in _ERROR,
                attributes={k: v for k, v in row.items() if k and k not in own and v},
                status_recorded="status" in cols,
            )
        )
    return out
