"""`serve` ranks with live metrics from a real Prometheus (Debian's), and the ranking is
what those metrics say: a service whose CPU and callers' edge latency jumped ranks first;
with no Prometheus configured, only Tempo's latest levels are left, which show no failing
call, and the recent deploy of a healthy service outranks it."""

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
        level = 0.3 if server == "catalog" else 0.02  # catalog is slow, and always was
        latency = noisy(level) * np.where(after, slow, 1.0)
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


def test_cli_and_mcp_rank_with_live_metrics(
    prometheus_url: str, settings: Settings, store: GraphStore, tmp_path: Path
) -> None:
    """`PROMETHEUS_URL=... stackgraph investigate` and the MCP `investigate` tool probe the
    same Prometheus the API does."""
    import asyncio
    import json
    import os
    import subprocess
    import sys

    from mcp import Client

    from stackgraph.mcp_server import build_server

    _world(settings, store, prometheus_url, tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKGRAPH_")}
    env |= {"PROMETHEUS_URL": prometheus_url, "STACKGRAPH_GRAPH": settings.graph,
            "STACKGRAPH_FALKORDB_URL": str(settings.falkordb_url),
            "STACKGRAPH_DATA_DIR": str(tmp_path / "cli")}  # fmt: skip
    cli = subprocess.run(
        [sys.executable, "-m", "stackgraph", "investigate", "--service", "frontend", "--json"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    plan = json.loads(cli.stdout)
    assert plan["candidates"][0]["service"] == "payment", plan["candidates"][:3]
    assert not any("no metrics source" in n for n in plan["notes"])

    async def via_mcp() -> list[str]:
        live = settings.model_copy(update={"prometheus_url": prometheus_url})
        async with Client(build_server(live)) as client:
            res = await client.call_tool("investigate", {"labels": {"service": "frontend"}})
        return [c["service"] for c in res.structured_content["candidates"]]

    assert asyncio.run(via_mcp())[0] == "payment"
