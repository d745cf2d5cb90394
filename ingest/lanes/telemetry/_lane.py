"""The `telemetry` lane: Tempo's service graph (live from Prometheus, or from span files)
as CALLS / READS_FROM / PUBLISHES_TO / CONSUMES_FROM edges with `source: Tempo`.

After its records are written, Tempo edges not seen for `telemetry_fresh_s` are flipped to
Stale (never deleted). If Prometheus is down or answers an error the lane raises
`SourceUnavailable` before anything is written, so nothing is refreshed or marked Stale.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from stackgraph.errors import InputError
from stackgraph.prometheus import PrometheusClient
from stackgraph.promql import PromQLNames
from stackgraph.schema import RecordBatch, Source

from ..registry import LaneInputs, register
from ._edges import edges_to_records
from ._pairing import pair_report, stats_from_spans
from ._prometheus import service_graph_stats
from ._spans import load_spans

if TYPE_CHECKING:
    from stackgraph.ingest.writer import GraphIngestor

__all__ = ["STALE_EDGE_TYPES", "collect", "mark_stale_edges"]

STALE_EDGE_TYPES = ("CALLS", "READS_FROM", "PUBLISHES_TO", "CONSUMES_FROM")
"""The edge types this lane writes, and so the ones it may flip to Stale."""


def _spans_path(inputs: LaneInputs) -> Path | None:
    given = inputs.options.get("spans")
    if given is not None:
        return Path(given)
    return inputs.settings.telemetry_spans


def mark_stale_edges(
    writer: GraphIngestor, inputs: LaneInputs, batch: RecordBatch | None = None
) -> Mapping[str, int]:
    """Flip Tempo edges last seen before now - telemetry_fresh_s to Stale (writer's clock)."""
    cutoff = float(writer.clock()) - inputs.settings.telemetry_fresh_s
    counts = {
        etype: writer.mark_stale(source=str(Source.TEMPO), cutoff=cutoff, edge_type=etype)
        for etype in STALE_EDGE_TYPES
    }
    return {etype: n for etype, n in counts.items() if n}


@register(
    "telemetry",
    "Tempo service-graph edges from Prometheus (or span files with --spans)",
    after_write=mark_stale_edges,
)
def collect(inputs: LaneInputs) -> RecordBatch:
    settings = inputs.settings
    spans = _spans_path(inputs)
    if spans is not None:
        read = load_spans(spans)
        stats, last_end = stats_from_spans(read)
        if not stats:
            raise InputError(f"span files at {spans}: {pair_report(read, stats)}")
        if not any(s.status_recorded for s in read):  # as where Tempo recorded no failure
            stats = [replace(s, error_rate=math.nan) for s in stats]
        seen_at = settings.telemetry_at or last_end or time.time()
        return edges_to_records(stats, seen_at=seen_at)
    at = inputs.options.get("at", settings.telemetry_at)
    names = PromQLNames.from_settings(settings)
    with PrometheusClient.from_settings(settings) as prom:
        stats = service_graph_stats(prom, names, at, settings.telemetry_latency_unit_s)
    return edges_to_records(stats, seen_at=float(at) if at is not None else time.time())
