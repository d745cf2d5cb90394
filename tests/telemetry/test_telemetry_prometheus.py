"""The telemetry lane against a real Prometheus holding backfilled service-graph series."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sgtest import serve_http
from telemetry_promserver import (
    BUCKETS,
    END,
    PAIRS,
    START,
    Pair,
    PromServer,
    free_port,
    prometheus,
)

from stackgraph import cypher
from stackgraph.cli.app import run_ingest
from stackgraph.config import Settings, load_settings
from stackgraph.errors import SourceUnavailable
from stackgraph.ingest import LANES, GraphIngestor, LaneInputs
from stackgraph.ingest.lanes.telemetry import (
    TEMPLATES,
    EdgeStat,
    edges_to_records,
    service_graph_stats,
)
from stackgraph.prometheus import PrometheusClient
from stackgraph.promql import PromQLNames, render
from stackgraph.store import GraphStore

__all__ = ["prometheus"]  # the session fixture, imported so pytest finds it

T = START + 1200  # every pair has a full 5m window here
WINDOW_S = 300


def pair(client: str, server: str) -> Pair:
    return next(p for p in PAIRS if (p.client, p.server) == (client, server))


def bucket_of(value: float) -> tuple[float, float]:
    lower = 0.0
    for le in BUCKETS:
        if value <= le:
            return lower, le
        lower = le
    return lower, float("inf")


def edges(store: GraphStore) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(type, src name, dst name) -> the edge's stored properties (clocks included)."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for etype in ("CALLS", "READS_FROM", "PUBLISHES_TO", "CONSUMES_FROM"):
        rows = store.read(cypher.render_type("export_edges", etype), {"after": -1, "limit": 1000})
        for r in rows:
            src = r["src"].get("name") or r["src"].get("subject")
            dst = r["dst"].get("name") or r["dst"].get("subject")
            out[(etype, src, dst)] = {**r["p"], "dst_label": r["dst_label"]}
    return out


def with_prom(settings: Settings, url: str, **extra: Any) -> Settings:
    return settings.model_copy(update={"prometheus_url": url, **extra})


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


# -- the live source ----------------------------------------------------------------------


def test_pair_stats_match_the_generator(prometheus: PromServer) -> None:
    with PrometheusClient(prometheus.url) as prom:
        stats = service_graph_stats(prom, PromQLNames(), at=T)
    got = {(s.client, s.server): s for s in stats}
    assert set(got) == {(p.client, p.server) for p in PAIRS}
    for p in PAIRS:
        s = got[(p.client, p.server)]
        assert s.trace_count == pytest.approx(p.rps * WINDOW_S, rel=1e-6), p
        assert s.error_rate == pytest.approx(p.error_ratio, abs=2e-3), p
        assert s.latency_p95_ms is not None
        assert s.latency_p95_ms == pytest.approx(
            p.expected_p95_s(T - WINDOW_S, T) * 1000, rel=2e-3
        ), p
        # the interpolated p95 lies in the bucket that holds the true p95
        lo, hi = bucket_of(p.true_p95_s())
        assert lo * 1000 <= s.latency_p95_ms <= hi * 1000, p
        assert (s.connection_type, s.virtual_node, s.subject) == (
            p.connection_type,
            p.virtual_node,
            p.subject,
        )


def test_where_no_failure_is_recorded_error_rates_are_not_measured(
    prometheus: PromServer,
) -> None:
    """Tempo creates a pair's failed counter at its first failure: with none anywhere (spans
    without a status), a 0% error rate is one nobody measured, so the edges carry none."""
    with PrometheusClient(prometheus.url) as prom:
        stats = service_graph_stats(prom, PromQLNames(failed="no_failure_recorded_total"), at=T)
    assert stats and all(math.isnan(s.error_rate) for s in stats)
    assert all(s.trace_count > 0 and s.latency_p95_ms is not None for s in stats)
    batch = edges_to_records(stats, seen_at=float(T))
    assert batch.edges and all("error_rate" not in e.props for e in batch.edges)
    assert all(e.props["trace_count"] > 0 for e in batch.edges)


def test_an_edges_error_rate_counts_only_the_calls_whose_failures_were_measured() -> None:
    """Two pairs onto one edge, one unmeasured: the rate is the measured pair's, not diluted."""
    stats = [EdgeStat("a", "b", 100, math.nan, 10.0), EdgeStat("a", "b", 300, 0.1, 20.0, "x")]
    (edge,) = edges_to_records(stats, seen_at=0.0).edges
    assert edge.props["trace_count"] == 400 and edge.props["error_rate"] == pytest.approx(0.1)


def test_every_template_is_valid_promql(prometheus: PromServer) -> None:
    with PrometheusClient(prometheus.url) as prom:
        for name in TEMPLATES.names():
            assert prom.query(render(TEMPLATES.load(name), PromQLNames()), at=T), name


def test_configured_metric_names_and_window(prometheus: PromServer) -> None:
    names = PromQLNames(window="1m")
    with PrometheusClient(prometheus.url) as prom:
        stats = service_graph_stats(prom, names, at=T)
        wrong = service_graph_stats(prom, PromQLNames(requests="calls_total"), at=T)
    front = next(s for s in stats if s.server == "checkout")
    assert front.trace_count == pytest.approx(20 * 60, rel=1e-6)
    assert wrong == []


def test_ingest_writes_typed_edges_with_stats(
    prometheus: PromServer, settings: Settings, store: GraphStore
) -> None:
    report = run_ingest(
        with_prom(settings, prometheus.url, telemetry_at=T), "telemetry", store=store
    )
    assert not report.rejected, report.rejected
    got = edges(store)
    calls = got[("CALLS", "frontend", "checkout")]
    assert calls["trace_count"] == 6000 and calls["error_rate"] == pytest.approx(0.02, abs=1e-3)
    assert calls["latency_p95_ms"] == pytest.approx(
        pair("frontend", "checkout").expected_p95_s(T - WINDOW_S, T) * 1000, rel=2e-3
    )
    assert calls["source"] == "Tempo" and calls["status"] == "Active"
    assert calls["observed_at"] == float(T)
    db = got[("READS_FROM", "checkout", "orders-db")]
    assert db["dst_label"] == "Datastore" and db["trace_count"] == 1500
    assert got[("CALLS", "checkout", "api.stripe.com")]["dst_label"] == "ExternalApi"
    assert got[("PUBLISHES_TO", "orders", "orders.created")]["dst_label"] == "NatsSubject"
    assert got[("CONSUMES_FROM", "shipping", "orders.created")]["trace_count"] == 1200
    # the uninstrumented "user" caller is no service; its callee is marked an entrypoint
    assert not any("user" in key for key in got)
    rows = store.read(cypher.render("export_nodes", label="Service"), {"after": -1, "limit": 100})
    services = {r["p"]["name"]: r["p"] for r in rows}
    assert "user" not in services and services["frontend"].get("entrypoint") is True
    assert services["payment"]["source"] == "Tempo"


def test_edges_turn_stale_when_the_window_moves_past_the_data(
    prometheus: PromServer, settings: Settings, store: GraphStore
) -> None:
    lane = LANES["telemetry"]
    assert lane.after_write is not None
    clock = Clock(2_000_000_000.0)

    def ingest_at(at: float) -> dict[str, int]:
        inputs = LaneInputs(with_prom(settings, prometheus.url, telemetry_at=at))
        with GraphIngestor(store, clock=clock) as writer:
            writer.write(lane.collect(inputs))
            assert lane.after_write is not None
            return dict(lane.after_write(writer, inputs))

    assert ingest_at(T) == {}
    before = edges(store)
    assert all(e["status"] == "Active" for e in before.values())

    clock.t += 1800  # 30 min later, ledger's series ended 10 min into... the past
    assert ingest_at(START + 2400) == {"CALLS": 1}
    now = edges(store)
    assert now[("CALLS", "payment", "ledger")]["status"] == "Stale"
    assert now[("CALLS", "frontend", "checkout")]["status"] == "Active"

    clock.t += 1800  # the window is past the data: nothing is seen, nothing is deleted
    marked = ingest_at(END + 3600)
    assert marked == {"CALLS": 3, "READS_FROM": 1, "PUBLISHES_TO": 1, "CONSUMES_FROM": 1}
    after = edges(store)
    assert set(after) == set(before)
    assert all(e["status"] == "Stale" for e in after.values())

    clock.t += 60  # seen again: revived (mark_stale reset the content hash)
    ingest_at(T)
    revived = edges(store)
    assert revived[("CALLS", "frontend", "checkout")]["status"] == "Active"
    assert revived[("CALLS", "payment", "ledger")]["status"] == "Active"


# -- failure: Prometheus answering 500, or down ------------------------------------------


def _answer_500(path: str) -> tuple[int, Any]:
    return 500, {"status": "error", "errorType": "internal", "error": "tsdb on fire"}


@pytest.fixture
def broken_prometheus() -> Iterator[str]:
    with serve_http(_answer_500) as url:
        yield url


def _aged_graph(prometheus: PromServer, settings: Settings, store: GraphStore) -> None:
    """Tempo edges written two hours ago (by the writer's clock)."""
    inputs = LaneInputs(with_prom(settings, prometheus.url, telemetry_at=T))
    with GraphIngestor(store, clock=Clock(time.time() - 7200)) as writer:
        writer.write(LANES["telemetry"].collect(inputs))


def test_prometheus_500_or_down_changes_nothing(
    prometheus: PromServer, broken_prometheus: str, settings: Settings, store: GraphStore
) -> None:
    _aged_graph(prometheus, settings, store)
    before = edges(store)
    closed = f"http://127.0.0.1:{free_port()}"
    for url, says in ((broken_prometheus, "answered HTTP 500"), (closed, "is unreachable")):
        with pytest.raises(SourceUnavailable) as info:
            run_ingest(with_prom(settings, url, telemetry_timeout_s=5.0), "telemetry", store=store)
        message = str(info.value)
        assert url in message and says in message and "\n" not in message
        assert edges(store) == before  # nothing refreshed, nothing marked Stale
    with pytest.raises(SourceUnavailable, match="tsdb on fire"):
        PrometheusClient(broken_prometheus).query("up")

    # the same ingest against a Prometheus that answers: the aged edges turn Stale
    report = run_ingest(
        with_prom(settings, prometheus.url, telemetry_at=END + 3600), "telemetry", store=store
    )
    assert report.stale == {"CALLS": 4, "READS_FROM": 1, "PUBLISHES_TO": 1, "CONSUMES_FROM": 1}
    assert all(e["status"] == "Stale" for e in edges(store).values())


def test_cli_reports_an_unreachable_prometheus_in_one_line(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKGRAPH_")}
    env |= {"STACKGRAPH_DATA_DIR": str(tmp_path / "data"), "PROMETHEUS_URL": url}
    proc = subprocess.run(
        [sys.executable, "-m", "stackgraph", "ingest", "--lanes", "telemetry"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: Prometheus at {url} is unreachable")


def test_no_prometheus_configured_is_a_clear_error(settings: Settings) -> None:
    with pytest.raises(SourceUnavailable, match="PROMETHEUS_URL"):
        LANES["telemetry"].collect(LaneInputs(settings))


def test_prometheus_url_from_either_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROMETHEUS_URL", "http://a:9090")
    assert load_settings(None).prometheus_url == "http://a:9090"
    monkeypatch.setenv("STACKGRAPH_PROMETHEUS_URL", "http://b:9090")
    assert load_settings(None).prometheus_url == "http://b:9090"
