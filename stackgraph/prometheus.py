"""The Prometheus HTTP API, read by the telemetry lane, the read path's metrics source and
the replay harness.

`PrometheusClient` speaks `/api/v1/query`, `/api/v1/query_range` and `/api/v1/series` with
httpx. Every failure (unreachable, a non-200 answer, an `"status": "error"` body, a body
that is not the API's JSON) becomes one `SourceUnavailable` naming the URL and the cause.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from stackgraph.config import Settings
from stackgraph.errors import SourceUnavailable

__all__ = ["MAX_POINTS", "JsonApiClient", "PrometheusClient", "Sample", "Series"]

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


class JsonApiClient:
    """GETs of an API answering `{"status": "success", "data": ...}` (Prometheus, Loki);
    every failure is one `SourceUnavailable` naming the server and the cause."""

    def __init__(self, url: str, what: str, timeout_s: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.what = what
        self._http = httpx.Client(base_url=self.url, timeout=timeout_s)

    def close(self) -> None:
        self._http.close()

    def get(self, path: str, params: Mapping[str, Any]) -> Any:
        """The answer's `data`."""
        where = f"{self.what} at {self.url}"
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


class PrometheusClient(JsonApiClient):
    """A thin, typed client of the Prometheus query API.

    with PrometheusClient("http://prometheus:9090") as prom:
        samples = prom.query('sum(rate(x_total[5m]))', at=1767225600)
    """

    def __init__(self, url: str, timeout_s: float = 10.0) -> None:
        super().__init__(url, "Prometheus", timeout_s)

    @classmethod
    def from_settings(cls, settings: Settings) -> PrometheusClient:
        """The client of the configured Prometheus; SourceUnavailable when none is set."""
        if not settings.prometheus_url:
            raise SourceUnavailable(
                "no Prometheus configured (PROMETHEUS_URL or STACKGRAPH_PROMETHEUS_URL)"
            )
        return cls(settings.prometheus_url, settings.telemetry_timeout_s)

    def __enter__(self) -> PrometheusClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def query(self, promql: str, at: float | None = None) -> list[Sample]:
        """An instant query; `at` (epoch seconds) defaults to the server's now."""
        params: dict[str, Any] = {"query": promql}
        if at is not None:
            params["time"] = f"{at:.3f}"
        data = self.get("/api/v1/query", params)
        if not isinstance(data, dict) or data.get("resultType") not in ("vector", "scalar"):
            raise SourceUnavailable(f"Prometheus at {self.url} answered an unexpected result")
        if data["resultType"] == "scalar":
            return [Sample({}, _float(data["result"][1]))]
        return [Sample(r.get("metric", {}), _float(r["value"][1])) for r in data["result"]]

    def query_range(self, promql: str, start: float, end: float, step_s: float) -> list[Series]:
        """A range query; the step is widened so no series exceeds MAX_POINTS."""
        step = max(step_s, (end - start) / (MAX_POINTS - 1), 0.001)
        params = {"query": promql, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": step}
        data = self.get("/api/v1/query_range", params)
        if not isinstance(data, dict) or data.get("resultType") != "matrix":
            raise SourceUnavailable(f"Prometheus at {self.url} answered an unexpected result")
        return [
            Series(r.get("metric", {}), [(float(t), _float(v)) for t, v in r["values"]])
            for r in data["result"]
        ]

    def series(
        self, selector: str, start: float | None = None, end: float | None = None
    ) -> list[dict[str, str]]:
        """The label sets of the series matching `selector` (the whole retention when no
        range is given)."""
        params: dict[str, Any] = {"match[]": selector}
        if start is not None:
            params["start"] = f"{start:.3f}"
        if end is not None:
            params["end"] = f"{end:.3f}"
        data = self.get("/api/v1/series", params)
        if not isinstance(data, list):
            return []
        return [{str(k): str(v) for k, v in d.items()} for d in data if isinstance(d, dict)]
