"""A baseline that holds data, read through a real Prometheus: when the 20 minutes before
the alert window hold nothing (a scrape gap, a recording made days apart), the plan
compares with the newest data there is (its symptom's, or where the symptom exports
nothing, its neighbours'), says so, and ranks on it; with data there, the baseline stays
where it was."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from sgtest import require

from stackgraph.eval.datasets.model import Case, MetricSeries, series
from stackgraph.eval.openmetrics import write_openmetrics
from stackgraph.eval.promserver import running_prometheus
from stackgraph.eval.records import edge_stat_records
from stackgraph.ingest import GraphIngestor
from stackgraph.ingest.lanes.telemetry import EdgeStat
from stackgraph.prometheus import PrometheusClient
from stackgraph.promql import PromQLNames
from stackgraph.rca import Alert, investigate
from stackgraph.rca.sources import PrometheusMetrics
from stackgraph.store import GraphStore

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z: a 10-minute quiet recording
GAP = 3 * 86400.0  # the incident, recorded three days later
FAULT = T0 + GAP  # the second recording starts with api's CPU tripled
FIRED = FAULT + 120
CPU = {"web": 0.2, "api": 0.4, "db": 0.3}


def recording(start: float, minutes: int, fault: float | None) -> dict[str, MetricSeries]:
    times = start + 15.0 * np.arange(minutes * 4)
    out = {}
    for svc, level in CPU.items():
        jitter = level * (1 + 0.02 * np.sin(np.arange(len(times))))
        if fault is not None and svc == "api":
            jitter = np.where(times >= fault, 3 * jitter, jitter)
        out[svc] = series(svc, "cpu", times, jitter)
    return out


def joined(*parts: dict[str, MetricSeries]) -> tuple[MetricSeries, ...]:
    def one(svc: str) -> MetricSeries:
        times = np.concatenate([p[svc].times for p in parts])
        return series(svc, "cpu", times, np.concatenate([p[svc].values for p in parts]))

    return tuple(one(svc) for svc in CPU)


def case(metrics: tuple[MetricSeries, ...]) -> Case:
    return Case(dataset="hand", case_id="gap", fault_type="cpu", root_cause="api",
                inject_time=FAULT, alert_window=(FAULT, FIRED), baseline_window=(T0, T0 + 600),
                symptom_service="web", services=tuple(CPU), call_edges=(), metrics=metrics,
                changes=(), manifests=None)  # fmt: skip


@pytest.fixture(scope="module")
def metrics(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusMetrics]:
    require(shutil.which("prometheus") is not None, "Debian prometheus")
    root: Path = tmp_path_factory.mktemp("gap-prom")
    quiet = recording(T0, 10, None)
    incident = recording(T0 + GAP, 10, FAULT)
    steady = recording(FAULT - 3600, 60, None)  # a second service set, never apart
    steady = {k: series(f"{k}2", "cpu", v.times, v.values) for k, v in steady.items()}
    mute = tuple(series(f"{m.service}3", "cpu", m.times, m.values)
                 for m in joined(quiet, incident) if m.service != "web")  # fmt: skip
    path = root / "cases.om"
    with path.open("w", encoding="utf-8") as out:
        write_openmetrics([case(joined(quiet, incident)), case(tuple(steady.values())),
                           case(mute)], out)  # fmt: skip
    with running_prometheus(root, path) as url:
        source = PrometheusMetrics(PrometheusClient(url), PromQLNames(window="1m"))
        yield source
        source.close()


def shop(store: GraphStore, suffix: str = "") -> None:
    calls = [EdgeStat(f"web{suffix}", f"api{suffix}", 100, 0.0, 50),
             EdgeStat(f"api{suffix}", f"db{suffix}", 100, 0.0, 20)]  # fmt: skip
    with GraphIngestor(store, who="test") as writer:
        assert not writer.write(edge_stat_records(calls)).rejected


def test_an_empty_baseline_moves_back_to_the_newest_data(
    store: GraphStore, metrics: PrometheusMetrics
) -> None:
    shop(store)
    alert = Alert({"service": "web"}, starts_at=FIRED)
    plan = investigate(store, alert, at=FIRED, metrics=metrics)
    assert plan.baseline is not None and plan.window is not None
    b0, b1 = plan.baseline
    coarse = 15 * 86400 / 11_000  # the step Prometheus allows over the 15 days searched
    assert T0 + 585 < b1 <= T0 + 600 + 60 + 2 * coarse and b1 - b0 == pytest.approx(1200)
    assert any("baseline is the 20 min before its last recorded data, 71.7 h" in n
               for n in plan.notes), plan.notes  # fmt: skip
    assert not any("no metrics were probed" in n for n in plan.notes), plan.notes
    assert plan.candidates[0].service == "api"
    assert any(e.signal == "anomaly" for e in plan.candidates[0].evidence)


def test_a_symptom_with_no_series_of_its_own_takes_its_neighbours_last_data(
    store: GraphStore, metrics: PrometheusMetrics
) -> None:
    shop(store, "3")  # web3 exports nothing, as a managed load balancer may not
    plan = investigate(store, Alert({"service": "web3"}, starts_at=FIRED), at=FIRED,
                       metrics=metrics)  # fmt: skip
    assert plan.baseline is not None
    assert T0 + 585 < plan.baseline[1] < FAULT - 86400
    assert any("before api3's (it has none of its own) last recorded data" in n
               for n in plan.notes), plan.notes  # fmt: skip
    assert plan.candidates[0].service == "api3"
    assert any(e.signal == "anomaly" for e in plan.candidates[0].evidence)


def test_a_baseline_with_data_stays_where_it_is(
    store: GraphStore, metrics: PrometheusMetrics
) -> None:
    shop(store, "2")
    plan = investigate(store, Alert({"service": "web2"}, starts_at=FIRED), at=FIRED,
                       metrics=metrics)  # fmt: skip
    assert plan.window is not None
    assert plan.baseline == (plan.window[0] - 1200, plan.window[0])
    assert not any("last recorded data" in n for n in plan.notes), plan.notes
