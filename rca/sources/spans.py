"""Read-time span source: the spans that ended in a window, from span files.

    spans = spans_from_settings(settings)       # FileSpans over `traces_path`, or None
    spans.spans(start, end)                      # [Span(...)], every service

The files are read once, in any format the telemetry lane reads (`load_spans`: OTLP JSON,
Jaeger JSON, CSV with or without span kinds; plain or gzipped), and indexed by end time.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from pathlib import Path

from stackgraph.config import Settings
from stackgraph.ingest.lanes.telemetry import Span, load_spans

__all__ = ["FileSpans", "spans_from_settings"]

MAX_SPANS = 200_000
"""Spans handed to one plan, per window: bounded memory for a busy window."""


class FileSpans:
    """`rca.model.SpanSource` over span files."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._spans = sorted(load_spans(path), key=lambda s: s.end_s)
        self._ends = [s.end_s for s in self._spans]

    def spans(self, start: float, end: float) -> Sequence[Span]:
        lo, hi = bisect.bisect_left(self._ends, start), bisect.bisect_right(self._ends, end)
        return self._spans[lo:hi][:MAX_SPANS]


def spans_from_settings(settings: Settings) -> FileSpans | None:
    """Span files under `traces_path`, or None."""
    return FileSpans(settings.traces_path) if settings.traces_path is not None else None
