"""`serve` ranks with live metrics from a real Prometheus (Debian's), and the ranking is
what those metrics say: a service whose CPU and callers' edge latency jumped ranks first;
with no Prometheus configured, a recent deploy of a healthy service outranks it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sgtest import require

from stackgraph.api.app import create_app
from stackgraph.cli.app import run_ingest
from stackgraph.config import Settings
from stackgraph.eval.datasets.model import USER, Case, ChangeEvent, MetricSeries, series
from stackgraph.eval.lane_files import helm_releases, write_yaml
from stackgraph.eval.openmetrics import write_openmetrics
from stackgraph.eval.promserver import running_prometheus
from stackgraph.store import GraphStore

NOW = float(int(time.time()) // 60 * 60)
FAULT = NOW - 180.0
"""payment's CPU and the latency its caller sees jump three minutes ago."""
EDGES = (
    (USER, "frontend"),
    ("frontend", "checkout"),
    ("frontend", "catalog"),
    ("checkout", "payment"),
    ("checkout", "cart"),
)


def _platform() -> Case:
    times = np.arange(NOW - 3600.0, NOW + 600.0, 60.0)
    after = times >= FAULT
    rng = np.random.default_rng(7)

    def noisy(level: float) -> np.ndarray:
        return level * (1 + 0.03 * rng.standard_normal(times.size))

    metrics: list[MetricSeries] = []
    for svc in ("frontend", "checkout", "payment", "catalog", "cart"):
        cpu = noisy(0.2) * np.where(after & (svc == "payment"), 4.0, 1.0)
        metrics.append(series(svc, "cpu", times, cpu))
        metrics.append(series(svc, "memory", times, noisy(2e8)))
    for client, server in EDGES:
        slow = {"payment": 5.0, "checkout": 3.0, "frontend": 2.0}.get(server, 1.0)
        latency = noisy(0.02) * np.where(after, slow, 1.0)
        metrics.append(series(server, "requests", times, noisy(20.0), client))
        metrics.append(series(server, "latency_client", times, latency, client))
        metrics.append(series(server, "latency_server", times, latency, client))
    return Case(
        dataset="live", case_id="live-1", fault_type="cpu", root_cause="payment",
        inject_time=FAULT, alert_window=(FAULT, NOW + 600.0),
        baseline_window=(NOW - 3600.0, FAULT), symptom_service="frontend",
        services=("cart", "catalog", "checkout", "frontend", "payment"), call_edges=(),
        metrics=tuple(metrics), changes=(ChangeEvent("cart", "2.0.1", NOW - 300.0),),
        manifests=None,
    )  # fmt: skip


@pytest.fixture(scope="module")
def prometheus_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require(all(__import__("shutil").which(b) for b in ("prometheus", "promtool")),
            "Debian prometheus and promtool")  # fmt: skip
    root = tmp_path_factory.mktemp("live-prom")
    om = root / "live.om"
    with om.open("w", encoding="utf-8") as fh:
        write_openmetrics([_platform()], fh)
    with running_prometheus(root, om) as url:
        yield url


def _world(settings: Settings, store: GraphStore, url: str, tmp: Path) -> None:
    """What the CronJobs would have written: Tempo edges now, and cart's rollout."""
    live = settings.model_copy(update={"prometheus_url": url})
    run_ingest(live, "telemetry", store=store)
    dump = write_yaml(tmp / "flux" / "releases.yaml", helm_releases(_platform().changes))
    run_ingest(settings, "change", manifests=dump.parent, store=store)


def _rank(settings: Settings, store: GraphStore) -> list[str]:
    app = create_app(settings, store=store, memory_fn=lambda st: None, token="t")
    with TestClient(app) as client:
        r = client.post(
            "/api/v1/investigate",
            headers={"Authorization": "Bearer t"},
            json={"labels": {"alertname": "HighLatency", "service": "frontend"},
                  "at": FAULT + 60.0, "verify": False},
        )  # fmt: skip
        assert r.status_code == 202, r.text
        plan = r.json()["plan"]
    return [c["service"] for c in plan["candidates"]]


def test_serve_ranks_with_live_metrics(
    prometheus_url: str, settings: Settings, store: GraphStore, tmp_path: Path
) -> None:
    _world(settings, store, prometheus_url, tmp_path)
    live = settings.model_copy(update={"prometheus_url": prometheus_url})
    with_metrics = _rank(live, store)
    without = _rank(settings, store)
    assert with_metrics[0] == "payment", with_metrics
    assert without.index("payment") > 0, without
    assert without[0] == "cart", without
