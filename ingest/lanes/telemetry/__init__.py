"""The `telemetry` lane (runtime layer): Tempo service-graph edges.

Public face: the pure `edges_to_records(stats, seen_at=...)` over `EdgeStat`s (the replay
harness reuses it), the live source (`PrometheusClient`, `service_graph_stats`), the
offline source (`load_spans`, `stats_from_spans`), and `PrometheusMetrics`, the read
path's `MetricsSource` over Prometheus.
"""

from ._edges import USER_CLIENT, EdgeStat, edges_to_records
from ._lane import STALE_EDGE_TYPES, collect, mark_stale_edges
from ._prometheus import (
    MAX_POINTS,
    PrometheusClient,
    PrometheusMetrics,
    Sample,
    Series,
    service_graph_stats,
)
from ._promql import PromQLNames
from ._spans import Span, load_spans, parse_csv, parse_jaeger, parse_otlp, stats_from_spans

__all__ = [
    "MAX_POINTS",
    "STALE_EDGE_TYPES",
    "USER_CLIENT",
    "EdgeStat",
    "PromQLNames",
    "PrometheusClient",
    "PrometheusMetrics",
    "Sample",
    "Series",
    "Span",
    "collect",
    "edges_to_records",
    "load_spans",
    "mark_stale_edges",
    "parse_csv",
    "parse_jaeger",
    "parse_otlp",
    "service_graph_stats",
    "stats_from_spans",
]
