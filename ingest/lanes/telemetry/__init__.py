"""The `telemetry` lane (runtime layer): Tempo service-graph edges.

Public face: the pure `edges_to_records(stats, seen_at=...)` over `EdgeStat`s, the live
source (`service_graph_stats` over `stackgraph.prometheus.PrometheusClient`) and the
offline source (`load_spans`, `stats_from_spans`). The read path's metrics source is
`stackgraph.rca.sources.PrometheusMetrics`.
"""

from ._edges import USER_CLIENT, EdgeStat, edges_to_records
from ._lane import STALE_EDGE_TYPES, collect, mark_stale_edges
from ._pairing import pair_report, stats_from_spans
from ._prometheus import TEMPLATES, service_graph_stats
from ._span import Span
from ._span_csv import parse_csv
from ._spans import load_spans, parse_jaeger, parse_otlp

__all__ = [
    "STALE_EDGE_TYPES",
    "TEMPLATES",
    "USER_CLIENT",
    "EdgeStat",
    "Span",
    "collect",
    "edges_to_records",
    "load_spans",
    "mark_stale_edges",
    "pair_report",
    "parse_csv",
    "parse_jaeger",
    "parse_otlp",
    "service_graph_stats",
    "stats_from_spans",
]
