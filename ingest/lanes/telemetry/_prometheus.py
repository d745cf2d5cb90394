"""Prometheus HTTP API: the live source of Tempo's service graph, and of metric probes.

`PrometheusClient` speaks `/api/v1/query`, `/api/v1/query_range` and `/api/v1/series` with
httpx. Every failure (unreachable, a non-200 answer, an `"status": "error"` body, a body
that is not the API's JSON) becomes one `SourceUnavailable` naming the URL and the cause.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx

from stackgraph.config import Settings
from stackgraph.errors import SourceUnavailable

from . import _promql
from ._edges import EdgeStat
from ._promql import PromQLNames

__all__ = [
    "MAX_POINTS",
    "PrometheusClient",
    "PrometheusMetrics",
    "Sample",
    "Series",
    "service_graph_stats",
]

MAX_POINTS = 11_000
"""Prometheus refuses range queries of more points per series; steps are widened to fit."""


@dataclass(frozen=True)
class Sample:
    """One element of an instant vector."""

    labels: Mapping[str, str]
    value: float


@dataclass(frozen=True)
class Series:
    """One element of a range matrix: (epoch seconds, value) points."""

    labels: Mapping[str, str]
    points: Sequence[tuple[float, float]]


def _float(text: Any) -> float:
    return float(text)  # Prometheus sends "NaN", "+Inf" as strings; float() reads them


class PrometheusClient:
    """A thin, typed client of the Prometheus query API.

    with PrometheusClient("http://prometheus:9090") as prom:
        samples = prom.query('sum(rate(x_total[5m]))', at=1767225600)
    """

    def __init__(self, url: str, timeout_s: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self._http = httpx.Client(base_url=self.url, timeout=timeout_s)

    @classmethod
    def from_settings(cls, settings: Settings) -> PrometheusClient:
        if not settings.prometheus_url:
            raise SourceUnavailable(
                "no Prometheus configured (PROMETHEUS_URL or STACKGRAPH_PROMETHEUS_URL)"
            )
        return cls(settings.prometheus_url, settings.telemetry_timeout_s)

    def __enter__(self) -> PrometheusClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _get(self, path: str, params: Mapping[str, Any]) -> Any:
        where = f"Prometheus at {self.url}"
        try:
            resp = self._http.get(path, params=dict(params))
        except httpx.TimeoutException as exc:
            raise SourceUnavailable(f"{where} timed out on {path}: {exc}") from exc
        except httpx.HTTPError as exc:
            raise SourceUnavailable(
                f"{where} is unreachable ({type(exc).__name__}: {exc})"
            ) from exc
        try:
            body = resp.json()
        except ValueError:
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        if resp.status_code != 200:
            detail = f": {error}" if error else ""
            raise SourceUnavailable(f"{where} answered HTTP {resp.status_code} on {path}{detail}")
        if not isinstance(body, dict) or body.get("status") != "success":
            raise SourceUnavailable(f"{where} answered {path} without a success status: {error}")
        return body.get("data")

    def query(self, promql: str, at: float | None = None) -> list[Sample]:
        """An instant query; `at` (epoch seconds) defaults to the server's now."""
        params: dict[str, Any] = {"query": promql}
        if at is not None:
            params["time"] = f"{at:.3f}"
        data = self._get("/api/v1/query", params)
        if not isinstance(data, dict) or data.get("resultType") not in ("vector", "scalar"):
            raise SourceUnavailable(f"Prometheus at {self.url} answered an unexpected result")
        if data["resultType"] == "scalar":
            return [Sample({}, _float(data["result"][1]))]
        return [Sample(r.get("metric", {}), _float(r["value"][1])) for r in data["result"]]

    def query_range(self, promql: str, start: float, end: float, step_s: float) -> list[Series]:
        """A range query; the step is widened so no series exceeds MAX_POINTS."""
        step = max(step_s, (end - start) / (MAX_POINTS - 1), 0.001)
        params = {"query": promql, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": step}
        data = self._get("/api/v1/query_range", params)
        if not isinstance(data, dict) or data.get("resultType") != "matrix":
            raise SourceUnavailable(f"Prometheus at {self.url} answered an unexpected result")
        return [
            Series(r.get("metric", {}), [(float(t), _float(v)) for t, v in r["values"]])
            for r in data["result"]
        ]

    def series(self, selector: str, start: float | None = None, end: float | None = None) -> int:
        """How many series match `selector` (the whole retention when no range is given)."""
        params: dict[str, Any] = {"match[]": selector}
        if start is not None:
            params["start"] = f"{start:.3f}"
        if end is not None:
            params["end"] = f"{end:.3f}"
        data = self._get("/api/v1/series", params)
        return len(data) if isinstance(data, list) else 0


def _pair(labels: Mapping[str, str], subject_label: str) -> tuple[str, str, str, str, str]:
    return (
        labels.get("client", ""),
        labels.get("server", ""),
        labels.get("connection_type", ""),
        labels.get("virtual_node", ""),
        labels.get(subject_label, ""),
    )


def service_graph_stats(
    prom: PrometheusClient,
    names: PromQLNames,
    at: float | None = None,
    latency_unit_s: float = 1.0,
) -> list[EdgeStat]:
    """Per client→server pair over the window ending at `at`: requests, error rate, p95.

    Pairs with no request in the window are left out: they were not seen.
    """
    q = {
        n: _promql.render(_promql.load(n), names)
        for n in ("edge_requests", "edge_failed", "edge_latency_p95")
    }
    requests = {
        _pair(s.labels, names.subject_label): s.value for s in prom.query(q["edge_requests"], at)
    }
    failed = {
        _pair(s.labels, names.subject_label): s.value for s in prom.query(q["edge_failed"], at)
    }
    p95 = {
        _pair(s.labels, names.subject_label): s.value for s in prom.query(q["edge_latency_p95"], at)
    }
    out: list[EdgeStat] = []
    for pair, count in sorted(requests.items()):
        if not math.isfinite(count) or count <= 0:
            continue
        errors = failed.get(pair, 0.0)
        rate = min(max(errors / count, 0.0), 1.0) if math.isfinite(errors) else 0.0
        lat = p95.get(pair)
        lat_ms = lat * latency_unit_s * 1000.0 if lat is not None and math.isfinite(lat) else None
        client, server, ctype, virtual, subject = pair
        out.append(EdgeStat(client, server, count, rate, lat_ms, ctype, virtual, subject))
    return out


class PrometheusMetrics:
    """`stackgraph.rca.model.MetricsSource` over Prometheus: a service's own signals.

    Built-in kinds come from the service graph with the service as the server:
    "latency" (p95, ms), "errors" (error ratio), "workload" (requests/s, the saturation
    proxy Tempo gives). More kinds (e.g. "cpu", "memory") come from PromQL templates in
    `telemetry_extra_promql`, where `<<service>>` is the quoted service name and `<<window>>`
    the rate window. Prometheus failures raise `SourceUnavailable`.
    """

    _BUILTIN: ClassVar[Mapping[str, str]] = {
        "latency": "service_latency_p95",
        "errors": "service_error_ratio",
        "workload": "service_request_rate",
    }

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
        self.names = names or PromQLNames()
        self.step_s = step_s
        self.latency_unit_s = latency_unit_s
        self.extra = dict(extra or {})
        clash = set(self.extra) & set(self._BUILTIN)
        if clash:
            raise ValueError(f"extra PromQL kinds {sorted(clash)} would replace built-in kinds")

    @classmethod
    def from_settings(cls, settings: Settings) -> PrometheusMetrics:
        return cls(
            PrometheusClient.from_settings(settings),
            PromQLNames.from_settings(settings),
            step_s=settings.telemetry_step_s,
            latency_unit_s=settings.telemetry_latency_unit_s,
            extra=settings.telemetry_extra_promql,
        )

    def kinds(self, service: str) -> Sequence[str]:
        """Built-in kinds when the service is a server in the service graph, then extras."""
        selector = _promql.render(_promql.load("service_series"), self.names, service)
        seen = self.client.series(selector) > 0
        return [*(self._BUILTIN if seen else ()), *sorted(self.extra)]

    def values(self, service: str, kind: str, start: float, end: float) -> Sequence[float]:
        """The kind's values over [start, end] at `step_s` resolution; gaps and NaN dropped."""
        if kind in self._BUILTIN:
            text = _promql.load(self._BUILTIN[kind])
        elif kind in self.extra:
            text = self.extra[kind]
        else:
            return []
        promql = _promql.render(text, self.names, service)
        series = self.client.query_range(promql, start, end, self.step_s)
        scale = self.latency_unit_s * 1000.0 if kind == "latency" else 1.0
        points = sorted(p for s in series for p in s.points)
        return [v * scale for _, v in points if math.isfinite(v)]
