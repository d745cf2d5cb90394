"""Read-time sources: what the read path asks at investigation time (not the graph).

metrics = metrics_from_settings(settings)      # PrometheusMetrics, or None without one
plan = investigate(store, alert, metrics=metrics)
"""

from __future__ import annotations

from stackgraph.config import Settings

from ..model import MetricsSource
from .logs import FileLogs, LokiLogs, logs_from_settings
from .prometheus import BUILTIN_KINDS, TEMPLATES, PrometheusMetrics
from .spans import FileSpans, spans_from_settings

__all__ = [
    "BUILTIN_KINDS",
    "TEMPLATES",
    "FileLogs",
    "FileSpans",
    "LokiLogs",
    "PrometheusMetrics",
    "logs_from_settings",
    "metrics_from_settings",
    "spans_from_settings",
]


def metrics_from_settings(settings: Settings) -> MetricsSource | None:
    """The live metrics source every entry point investigates with: Prometheus when
    `prometheus_url` is set; None otherwise (the plan then notes that probes were skipped)."""
    if not settings.prometheus_url:
        return None
    return PrometheusMetrics.from_settings(settings)
