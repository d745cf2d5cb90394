"""`PrometheusMetrics`: the read path's live `MetricsSource`, over what a Kubernetes platform
already exports to Prometheus.

| kind | from | template |
|---|---|---|
| `latency` | Tempo service graph, the service as server (p95, ms) | `latency` |
| `errors` | Tempo service graph (failed / requests) | `errors` |
| `workload` | Tempo service graph (requests/s) | `workload` |
| `cpu`, `memory` | cAdvisor (cores, working-set bytes) | `cpu`, `memory` |
| `network/rx`, `network/tx` | cAdvisor (bytes/s) | `network_rx`, `network_tx` |
| `errors/restarts` | kube-state-metrics (restarts in the window) | `restarts` |
| `latency/from:<caller>` | service graph, caller → service, caller's wait (p95) | `edge_latency` |
| `errors/from:<caller>` | service graph, caller → service (failed / requests) | `edge_errors` |

Callers are the `client` labels of the service-graph series with the service as `server`;
`from:<caller>` series are the same edges the telemetry scorer reads (see
`stackgraph.rca.model.EDGE_PREFIX`). `telemetry_extra_promql` adds kinds or replaces a
built-in one (an empty template switches it off). Prometheus failures raise
`SourceUnavailable`; the probes generator turns that into a note on a partial plan.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from stackgraph.config import Settings
from stackgraph.prometheus import PrometheusClient
from stackgraph.promql import PromQLNames, Templates, duration_s, render

from ..model import EDGE_PREFIX

__all__ = ["BUILTIN_KINDS", "EDGE_KINDS", "TEMPLATES", "PrometheusMetrics"]

TEMPLATES = Templates(__package__ or "stackgraph.rca.sources")

BUILTIN_KINDS: Mapping[str, str] = MappingProxyType(
    {
        "latency": "latency",
        "errors": "errors",
        "workload": "workload",
        "cpu": "cpu",
        "memory": "memory",
        "network/rx": "network_rx",
        "network/tx": "network_tx",
        "errors/restarts": "restarts",
    }
)
"""kind → template name."""

EDGE_KINDS: Mapping[str, str] = MappingProxyType(
    {"latency": "edge_latency", "errors": "edge_errors"}
)
"""Per caller: kind group → template name; the kind is `<group>/from:<caller>`."""


class PrometheusMetrics:
    """`stackgraph.rca.model.MetricsSource` over Prometheus.

    metrics = PrometheusMetrics.from_settings(settings)
    metrics.kinds("checkout")      # ['latency', ..., 'latency/from:frontend', ...]
    metrics.points("checkout", "cpu", start, end)   # [(epoch s, cores), ...]
    """

    def __init__(
        self,
        client: PrometheusClient,
        names: PromQLNames | None = None,
        *,
        step_s: float = 15.0,
        latency_unit_s: float = 1.0,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        self.client = client
        self.names = names or PromQLNames(window="1m")
        self.step_s = step_s
        self.latency_unit_s = latency_unit_s
        self.source_name = f"Prometheus at {client.url}"
        templates = {k: TEMPLATES.load(v) for k, v in BUILTIN_KINDS.items()}
        templates.update(extra or {})
        self.templates = {k: v for k, v in templates.items() if v.strip()}

    @classmethod
    def from_settings(cls, settings: Settings) -> PrometheusMetrics:
        return cls(
            PrometheusClient.from_settings(settings),
            PromQLNames.from_settings(settings, window=settings.metrics_window),
            step_s=settings.telemetry_step_s,
            latency_unit_s=settings.telemetry_latency_unit_s,
            extra=settings.telemetry_extra_promql,
        )

    @property
    def span_s(self) -> float:
        """The finest span one reading covers: a rate's window, or the step if coarser."""
        return max(self.step_s, duration_s(self.names.window))

    def close(self) -> None:
        self.client.close()

    def callers(self, service: str, start: float, end: float) -> list[str]:
        """The services Tempo saw calling `service` between start and end."""
        selector = render(TEMPLATES.load("callers"), self.names, service)
        found = self.client.series(selector, start, end)
        return sorted({s["client"] for s in found if s.get("client")})

    def kinds(self, service: str, start: float, end: float) -> Sequence[str]:
        """Every built-in or configured kind, and the edges from the callers seen between
        start and end; a kind without data yields no points."""
        edges = [
            f"{g}/{EDGE_PREFIX}{c}" for c in self.callers(service, start, end) for g in EDGE_KINDS
        ]
        return [*self.templates, *edges]

    def _promql(self, service: str, kind: str) -> str | None:
        if kind in self.templates:
            return render(self.templates[kind], self.names, service)
        group, _, series = kind.partition("/")
        if series.startswith(EDGE_PREFIX) and group in EDGE_KINDS:
            caller = series[len(EDGE_PREFIX) :]
            return render(TEMPLATES.load(EDGE_KINDS[group]), self.names, service, caller)
        return None

    def points(
        self, service: str, kind: str, start: float, end: float
    ) -> Sequence[tuple[float, float]]:
        """(epoch s, value) at `step_s` over [start, end], oldest first; gaps and NaN dropped.
        A template giving several series keeps the largest value per time (the worst pod).
        Latency kinds are in milliseconds."""
        promql = self._promql(service, kind)
        if promql is None:
            return []
        scale = self.latency_unit_s * 1000.0 if kind.startswith("latency") else 1.0
        worst: dict[float, float] = {}
        for s in self.client.query_range(promql, start, end, self.step_s):
            for t, v in s.points:
                if math.isfinite(v):
                    worst[t] = max(worst.get(t, -math.inf), v * scale)
        return sorted(worst.items())
