"""`PrometheusMetrics` reads back what `write_openmetrics` wrote into a real Prometheus: the
replay's telemetry path, end to end (case -> OpenMetrics -> promtool -> Prometheus ->
the read path's PromQL -> points).

The hand-made case runs 40 minutes at 60 s resolution with every signal stepping at minute
20 (ticks from T0 + 1155 s on carry the second value). Reads stay well inside a constant
stretch, since `rate[1m]` mixes neighbouring ticks."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from sgtest import require

from stackgraph.errors import InputError, SourceUnavailable
from stackgraph.eval.datasets.model import USER, Case, MetricSeries, series
from stackgraph.eval.openmetrics import SERVICE_ERRORS_PROMQL, write_openmetrics
from stackgraph.eval.promserver import free_port, running_prometheus
from stackgraph.prometheus import PrometheusClient
from stackgraph.promql import PromQLNames
from stackgraph.rca.sources import BUILTIN_KINDS, PrometheusMetrics

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
POINTS = 40
CHANGE = 20
BEFORE = (T0 + 600, T0 + 900)
AFTER = (T0 + 1800, T0 + 2100)
TIMES = T0 + 60.0 * np.arange(POINTS)


def stepped(one: float, two: float) -> np.ndarray:
    return np.where(np.arange(POINTS) < CHANGE, one, two).astype(np.float64)


POD: dict[str, dict[str, tuple[float, float]]] = {
    "web": {"cpu": (0.25, 0.25), "memory": (2e8, 2e8), "network_rx": (1000.0, 5000.0),
            "network_tx": (2000.0, 2000.0), "restarts": (0.0, 0.0)},
    "api": {"cpu": (0.5, 1.5), "memory": (5e8, 9e8), "network_rx": (3000.0, 3000.0),
            "network_tx": (4000.0, 12000.0), "restarts": (0.0, 2.0)},
    "db": {"cpu": (0.1, 0.1), "memory": (1e9, 1e9)},  # no network, no restarts
    "cart": {"cpu": (0.3, 0.3)},
    "cart-db": {"cpu": (0.7, 0.7)},
}  # fmt: skip
EDGE: dict[tuple[str, str], dict[str, tuple[float, float]]] = {
    (USER, "web"): {"requests": (50.0, 50.0), "latency_server": (0.08, 0.3),
                    "latency_client": (0.1, 0.35)},
    ("web", "api"): {"requests": (40.0, 20.0), "errors": (0.01, 0.2),
                     "latency_server": (0.05, 1.2), "latency_client": (0.06, 1.5)},
    ("api", "db"): {"latency_server": (0.004, 0.004)},  # no requests, no client side
}  # fmt: skip


def build_case(case_id: str, services: list[str], timeline: str = "") -> Case:
    metrics: list[MetricSeries] = [
        series(svc, name, TIMES, stepped(*values))
        for svc in services
        for name, values in POD[svc].items()
    ]
    metrics += [
        series(server, name, TIMES, stepped(*values), client=client)
        for (client, server), signals in EDGE.items()
        if server in services
        for name, values in signals.items()
    ]
    return Case(
        dataset="hand",
        case_id=case_id,
        fault_type="cpu",
        root_cause="api",
        inject_time=T0 + 60 * CHANGE,
        alert_window=(T0 + 60 * CHANGE, T0 + 60 * POINTS),
        baseline_window=(T0, T0 + 60 * CHANGE),
        symptom_service=services[0],
        services=tuple(services),
        call_edges=(),
        metrics=tuple(metrics),
        changes=(),
        manifests=None,
        timeline=timeline,
    )


CASES = [build_case("three-tier", ["web", "api", "db"]), build_case("shop", ["cart", "cart-db"])]


@pytest.fixture(scope="module")
def metrics(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusMetrics]:
    require(shutil.which("prometheus") is not None, "Debian prometheus")
    require(shutil.which("promtool") is not None, "Debian promtool")
    root = tmp_path_factory.mktemp("sources-prom")
    path = root / "cases.om"
    with path.open("w", encoding="utf-8") as out:
        write_openmetrics(CASES, out)
    with running_prometheus(root, path) as url:
        source = PrometheusMetrics(PrometheusClient(url), PromQLNames(window="1m"))
        yield source
        source.close()


def values(
    source: PrometheusMetrics, service: str, kind: str, window: tuple[float, float]
) -> list[float]:
    points = source.points(service, kind, *window)
    assert [t for t, _ in points] == [window[0] + 15 * i for i in range(21)], (service, kind)
    return [v for _, v in points]


def flat(value: float, rel: float = 1e-9) -> object:
    return pytest.approx([value] * 21, rel=rel)


def test_kinds_are_the_built_ins_plus_one_pair_per_caller(metrics: PrometheusMetrics) -> None:
    assert set(metrics.kinds("api", *AFTER)) == {
        *BUILTIN_KINDS,
        "latency/from:web",
        "errors/from:web",
    }
    assert metrics.callers("web", *AFTER) == [USER]
    assert metrics.callers("db", *AFTER) == ["api"]
    assert set(metrics.kinds("cart", *AFTER)) == set(BUILTIN_KINDS)


@pytest.mark.parametrize(
    ("service", "kind", "signal", "scale"),
    [
        ("api", "cpu", "cpu", 1.0),
        ("api", "memory", "memory", 1.0),
        ("api", "network/rx", "network_rx", 1.0),
        ("api", "network/tx", "network_tx", 1.0),
        ("web", "cpu", "cpu", 1.0),
        ("web", "network/rx", "network_rx", 1.0),
        ("db", "memory", "memory", 1.0),
    ],
)
def test_pod_signals_read_back_as_written(
    metrics: PrometheusMetrics, service: str, kind: str, signal: str, scale: float
) -> None:
    before, after = POD[service][signal]
    assert values(metrics, service, kind, BEFORE) == flat(before * scale)
    assert values(metrics, service, kind, AFTER) == flat(after * scale)


def test_edge_signals_read_back_as_written(metrics: PrometheusMetrics) -> None:
    web_api = EDGE[("web", "api")]
    for window, i in ((BEFORE, 0), (AFTER, 1)):
        assert values(metrics, "api", "workload", window) == flat(web_api["requests"][i])
        assert values(metrics, "api", "errors/from:web", window) == flat(web_api["errors"][i])
        assert values(metrics, "api", "errors", window) == flat(web_api["errors"][i])
        client_ms = web_api["latency_client"][i] * 1000
        server_ms = web_api["latency_server"][i] * 1000
        assert values(metrics, "api", "latency/from:web", window) == flat(client_ms, 1e-6)
        assert values(metrics, "api", "latency", window) == flat(server_ms, 1e-6)
        user_web = EDGE[(USER, "web")]
        assert values(metrics, "web", "latency/from:user", window) == flat(
            user_web["latency_client"][i] * 1000, 1e-6
        )
        assert values(metrics, "web", "latency", window) == flat(
            user_web["latency_server"][i] * 1000, 1e-6
        )
        assert values(metrics, "web", "workload", window) == flat(50.0)


def test_an_edge_without_a_client_histogram_falls_back_to_the_server_side(
    metrics: PrometheusMetrics,
) -> None:
    assert values(metrics, "db", "latency/from:api", BEFORE) == flat(4.0, 1e-6)
    assert values(metrics, "db", "latency", AFTER) == flat(4.0, 1e-6)
    assert values(metrics, "db", "workload", AFTER) == flat(1.0)  # one per second, unstated
    assert values(metrics, "db", "errors", AFTER) == flat(0.0)  # no failed series: `or vector(0)`
    assert values(metrics, "web", "errors/from:user", BEFORE) == flat(0.0)


def test_restarts_show_in_the_windows_that_hold_them(metrics: PrometheusMetrics) -> None:
    points = metrics.points("api", "errors/restarts", T0 + 1110, T0 + 1230)
    jump = {T0 + 1155, T0 + 1170, T0 + 1185, T0 + 1200}  # windows [t - 60, t] across the step
    assert points == [(t, 2.0 if t in jump else 0.0) for t in np.arange(T0 + 1110, T0 + 1231, 15)]
    assert values(metrics, "web", "errors/restarts", AFTER) == flat(0.0)


def test_a_service_without_data_for_a_kind_yields_nothing(metrics: PrometheusMetrics) -> None:
    assert metrics.points("db", "network/rx", *AFTER) == []
    assert metrics.points("db", "errors/restarts", *AFTER) == []
    assert metrics.points("db", "latency/from:nobody", *AFTER) == []
    assert metrics.points("nobody", "cpu", *AFTER) == []
    assert metrics.points("cart", "latency", *AFTER) == []
    assert metrics.points("api", "no-such-kind", *AFTER) == []
    assert metrics.points("api", "cpu", T0 - 7200, T0 - 3600) == []  # before the data


def test_the_pod_pattern_keeps_prefix_sharing_services_apart(metrics: PrometheusMetrics) -> None:
    assert values(metrics, "cart", "cpu", AFTER) == flat(0.3)
    assert values(metrics, "cart-db", "cpu", AFTER) == flat(0.7)


def test_an_injection_like_service_name_is_refused(metrics: PrometheusMetrics) -> None:
    evil = 'x"} or vector(1) #'
    with pytest.raises(InputError):
        metrics.points(evil, "cpu", *AFTER)
    with pytest.raises(InputError):
        metrics.kinds(evil, *AFTER)
    with pytest.raises(InputError):
        metrics.points("api", f"latency/from:{evil}", *AFTER)


def test_a_dead_prometheus_is_unavailable_not_empty() -> None:
    dead = PrometheusMetrics(PrometheusClient(f"http://127.0.0.1:{free_port()}", timeout_s=5.0))
    with pytest.raises(SourceUnavailable, match="unreachable"):
        dead.points("api", "cpu", *AFTER)
    with pytest.raises(SourceUnavailable, match="unreachable"):
        dead.kinds("api", *AFTER)
    dead.close()


def test_a_services_own_error_ratio_is_read_where_it_reports_one(tmp_path: Path) -> None:
    """A dataset that measured the entry's errors but no call's (`SERVICE_SIGNALS`): the
    replay writes them as the service's own ratio, not as Tempo's failed calls into it, and
    the read path's `errors` (as the replay configures it) reads that ratio, else Tempo's.
    No call into it carries a failure series, so its calls show no move of errors."""
    require(shutil.which("prometheus") is not None, "Debian prometheus")
    require(shutil.which("promtool") is not None, "Debian promtool")
    own = build_case("own", ["web", "api", "db"])
    own = replace(own, metrics=(*own.metrics, series("web", "errors", TIMES, stepped(0.0, 0.1))))
    path = tmp_path / "own.om"
    with path.open("w", encoding="utf-8") as out:
        write_openmetrics([own], out)
    text = path.read_text()
    assert 'service_request_error_ratio{service="web"}' in text
    assert 'failed_total{client="user"' not in text  # no failed call into web is claimed
    with running_prometheus(tmp_path, path) as url:
        source = PrometheusMetrics(PrometheusClient(url), PromQLNames(window="1m"),
                                   extra={"errors": SERVICE_ERRORS_PROMQL})  # fmt: skip
        try:
            assert values(source, "web", "errors", BEFORE) == flat(0.0)
            assert values(source, "web", "errors", AFTER) == flat(0.1)
            assert values(source, "api", "errors", AFTER) == flat(0.2)  # Tempo's, web -> api
            assert values(source, "web", "errors/from:user", AFTER) == flat(0.0)
        finally:
            source.close()
