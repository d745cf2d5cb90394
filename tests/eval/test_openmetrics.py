"""Cases -> OpenMetrics (pure): resampling, counters, placing recordings in time, pod names,
and histograms whose Prometheus p95 is exactly the dataset's (checked against a
reimplementation of Prometheus' bucketQuantile)."""

from __future__ import annotations

import io
import itertools
import json
import math
import random
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from stackgraph.eval.datasets.model import (
    USER,
    CallEdge,
    Case,
    ChangeEvent,
    DatasetError,
    MetricSeries,
    series,
)
from stackgraph.eval.openmetrics import (
    BUCKETS,
    MARGIN_S,
    WriteStats,
    p95_fractions,
    place,
    pod_name,
    resample,
    shifted,
    write_openmetrics,
)
from stackgraph.eval.promserver import split_by_block
from stackgraph.promql import PromQLNames, render
from stackgraph.rca.agent.toolbox import LOOKBACK_S

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z, a multiple of 15 s
DAY = 86_400.0

Labels = frozenset[tuple[str, str]]
Parsed = dict[tuple[str, Labels], list[tuple[float, float]]]


def case(
    case_id: str,
    metrics: Sequence[MetricSeries],
    *,
    timeline: str = "",
    start: float = T0,
    inject: float = T0 + 1200,
    end: float = T0 + 2400,
) -> Case:
    return Case(
        dataset="hand",
        case_id=case_id,
        fault_type="cpu",
        root_cause="api",
        inject_time=inject,
        alert_window=(inject, end),
        baseline_window=(start, inject),
        symptom_service="web",
        services=tuple(sorted({m.service for m in metrics})),
        call_edges=(),
        metrics=tuple(metrics),
        changes=(ChangeEvent("api", "v2", inject - 300),),
        manifests=None,
        timeline=timeline,
    )


def minutes(n: int, start: float = T0) -> np.ndarray:
    return start + 60.0 * np.arange(n)


def write(cases: Sequence[Case], namespace: str = "default") -> tuple[str, WriteStats]:
    out = io.StringIO()
    stats = write_openmetrics(cases, out, namespace=namespace)
    return out.getvalue(), stats


_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+) (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text: str) -> tuple[dict[str, str], Parsed]:
    """(TYPE name -> type, (sample name, labels) -> [(t, v)]) of OpenMetrics text."""
    types: dict[str, str] = {}
    samples: Parsed = {}
    lines = text.splitlines()
    assert lines[-1] == "# EOF" and text.endswith("\n")
    for line in lines[:-1]:
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert name not in types, f"family {name} declared twice"
            types[name] = kind
            continue
        m = _SAMPLE.match(line)
        assert m, line
        labels = frozenset(_LABEL.findall(m.group(2)))
        assert re.fullmatch(r"-?[0-9]+(\.[0-9]{1,3})?", m.group(4)), m.group(4)
        samples.setdefault((m.group(1), labels), []).append((float(m.group(4)), float(m.group(3))))
    return types, samples


def only(samples: Parsed, name: str, **labels: str) -> list[tuple[float, float]]:
    found = [
        pts for (n, ls), pts in samples.items() if n == name and set(labels.items()) <= set(ls)
    ]
    assert len(found) == 1, (name, labels, len(found))
    return found[0]


def increments(points: list[tuple[float, float]]) -> list[float]:
    values = [v for _, v in points]
    return [values[0], *(b - a for a, b in itertools.pairwise(values))]


# --- Prometheus' histogram_quantile, from its documented algorithm (promql/quantile.go) -----


def bucket_quantile(q: float, buckets: list[tuple[float, float]]) -> float:
    """histogram_quantile over (upper bound, cumulative count) pairs: sort by bound, need
    +Inf last, force monotonic counts, find the first bucket whose count reaches
    rank = q * total and interpolate linearly inside it (from 0 in the first bucket; the
    +Inf bucket answers the last finite bound)."""
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    bs = sorted(buckets)
    if not math.isinf(bs[-1][0]):
        return math.nan
    coalesced: list[list[float]] = []
    for bound, count in bs:
        if coalesced and coalesced[-1][0] == bound:
            coalesced[-1][1] += count
        else:
            coalesced.append([bound, count])
    for i in range(1, len(coalesced)):
        coalesced[i][1] = max(coalesced[i][1], coalesced[i - 1][1])
    if len(coalesced) < 2:
        return math.nan
    observations = coalesced[-1][1]
    if observations == 0:
        return math.nan
    rank = q * observations
    b = next((i for i in range(len(coalesced) - 1) if coalesced[i][1] >= rank), len(coalesced) - 1)
    if b == len(coalesced) - 1:
        return coalesced[-2][0]
    if b == 0 and coalesced[0][0] <= 0:
        return coalesced[0][0]
    start, end, count = 0.0, coalesced[b][0], coalesced[b][1]
    if b > 0:
        start = coalesced[b - 1][0]
        count -= coalesced[b - 1][1]
        rank -= coalesced[b - 1][1]
    return start + (end - start) * (rank / count)


def p95_of(fractions: np.ndarray, n: float) -> float:
    cumulative = np.cumsum(fractions * n)
    return bucket_quantile(
        0.95, [*zip(BUCKETS, cumulative[:-1], strict=True), (math.inf, cumulative[-1])]
    )


# --- pod names ------------------------------------------------------------------------------


def pods_regex(service: str) -> str:
    return str(json.loads(render("<<pods>>", PromQLNames(), service)))


@pytest.mark.parametrize("service", ["web", "api", "cart", "cart-db", "ts-order-service", "a.b"])
def test_pod_names_match_the_default_pod_pattern(service: str) -> None:
    name = pod_name(service)
    assert name == pod_name(service)  # stable
    assert re.fullmatch(r"[a-z0-9.-]+-[0-9a-f]{10}-[0-9a-f]{5}", name)
    assert re.fullmatch(pods_regex(service), name)


def test_a_pod_pattern_does_not_take_a_prefix_sharing_service() -> None:
    for mine, other in (("cart", "cart-db"), ("ts-order", "ts-order-other"), ("a", "a-b")):
        assert not re.fullmatch(pods_regex(mine), pod_name(other))
        assert not re.fullmatch(pods_regex(other), pod_name(mine))


# --- resampling ---------------------------------------------------------------------------------


def test_a_coarse_series_covers_the_ticks_of_its_steps() -> None:
    times = np.array([T0, T0 + 60, T0 + 120, T0 + 300, T0 + 360])  # median step 60, a gap
    ticks, values = resample(times, np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    got = dict(zip(((ticks - T0) // 15).tolist(), values.tolist(), strict=True))
    # a point at t covers (t - 60, t]: ticks t-45 .. t; the gap (120, 240] has no samples
    assert got == {
        -3: 1.0, -2: 1.0, -1: 1.0, 0: 1.0,
        1: 2.0, 2: 2.0, 3: 2.0, 4: 2.0,
        5: 3.0, 6: 3.0, 7: 3.0, 8: 3.0,
        17: 4.0, 18: 4.0, 19: 4.0, 20: 4.0,
        21: 5.0, 22: 5.0, 23: 5.0, 24: 5.0,
    }  # fmt: skip
    assert ticks.dtype == np.int64 and all(t % 15 == 0 for t in ticks.tolist())


def test_an_unaligned_coarse_series_takes_the_first_covering_point() -> None:
    times = np.array([T0 + 50, T0 + 80, T0 + 110])  # 30 s steps, off the tick grid
    ticks, values = resample(times, np.array([1.0, 2.0, 3.0]))
    assert dict(zip((ticks - T0).tolist(), values.tolist(), strict=True)) == {
        30: 1.0, 45: 1.0, 60: 2.0, 75: 2.0, 90: 3.0, 105: 3.0,
    }  # fmt: skip


def test_a_single_point_covers_a_minute() -> None:
    ticks, values = resample(np.array([T0 + 60]), np.array([7.0]))
    assert (ticks - T0).tolist() == [15, 30, 45, 60] and values.tolist() == [7.0] * 4


def test_a_fine_series_is_averaged_per_tick() -> None:
    times = T0 + np.arange(1.0, 46.0)  # 1 s steps over (T0, T0 + 45]
    ticks, values = resample(times, np.arange(1.0, 46.0))
    assert (ticks - T0).tolist() == [15, 30, 45]
    assert values.tolist() == [8.0, 23.0, 38.0]  # means of 1..15, 16..30, 31..45


def test_an_empty_series_has_no_ticks() -> None:
    ticks, values = resample(np.zeros(0), np.zeros(0))
    assert len(ticks) == 0 and len(values) == 0


# --- pod signals ---------------------------------------------------------------------------------


def test_pod_signals_become_cadvisor_and_kube_state_metrics_series() -> None:
    t = minutes(3)
    c = case(
        "c1",
        [
            series("api", "cpu", t, np.array([0.5, 1.0, 2.0])),
            series("api", "memory", t, np.array([1e9, 2e9, 3e9])),
            series("api", "network_rx", t, np.array([100.0, 100.0, 200.0])),
            series("api", "network_tx", t, np.array([10.0, 20.0, 30.0])),
            series("api", "restarts", t, np.array([0.0, 1.0, 1.0])),
        ],
    )
    text, stats = write([c])
    types, samples = parse(text)
    assert types == {
        "container_cpu_usage_seconds": "counter",
        "container_memory_working_set_bytes": "gauge",
        "container_network_receive_bytes": "counter",
        "container_network_transmit_bytes": "counter",
        "kube_pod_container_status_restarts": "counter",
    }
    pod = {"namespace": "default", "pod": pod_name("api")}
    cpu = only(samples, "container_cpu_usage_seconds_total", container="api", **pod)
    assert [t - T0 for t, _ in cpu] == [-45, -30, -15, 0, 15, 30, 45, 60, 75, 90, 105, 120]
    assert increments(cpu) == [7.5] * 4 + [15.0] * 4 + [30.0] * 4  # cores * 15 s per tick
    memory = only(samples, "container_memory_working_set_bytes", container="api", **pod)
    assert [v for _, v in memory] == [1e9] * 4 + [2e9] * 4 + [3e9] * 4
    rx = only(samples, "container_network_receive_bytes_total", interface="eth0", **pod)
    assert increments(rx) == [1500.0] * 8 + [3000.0] * 4
    tx = only(samples, "container_network_transmit_bytes_total", interface="eth0", **pod)
    assert increments(tx)[-1] == 450.0
    restarts = only(samples, "kube_pod_container_status_restarts_total", container="api", **pod)
    assert [v for _, v in restarts] == [0.0] * 4 + [1.0] * 8  # already cumulative
    assert stats == WriteStats(series=5, samples=60, start=T0 - 45, end=T0 + 120)


def test_the_namespace_is_a_label() -> None:
    text, _ = write([case("c", [series("api", "memory", minutes(1), np.array([1.0]))])],
                    namespace="shop")  # fmt: skip
    _, samples = parse(text)
    assert only(samples, "container_memory_working_set_bytes", namespace="shop")


def test_a_negative_rate_does_not_turn_a_counter_back() -> None:
    text, _ = write([case("c", [series("api", "cpu", minutes(2), np.array([1.0, -1.0]))])])
    _, samples = parse(text)
    assert increments(only(samples, "container_cpu_usage_seconds_total"))[4:] == [0.0] * 4


# --- edge signals --------------------------------------------------------------------------------


def test_edge_signals_become_service_graph_series() -> None:
    t = minutes(2)
    c = case(
        "c1",
        [
            series("web", "requests", t, np.array([10.0, 20.0]), client=USER),
            series("web", "errors", t, np.array([0.1, 0.5]), client=USER),
            series("web", "latency_server", t, np.array([0.05, 1.2]), client=USER),
            series("web", "latency_client", t, np.array([0.06, 1.5]), client=USER),
        ],
    )
    text, stats = write([c])
    types, samples = parse(text)
    assert types == {
        "traces_service_graph_request": "counter",
        "traces_service_graph_request_failed": "counter",
        "traces_service_graph_request_server_seconds": "histogram",
        "traces_service_graph_request_client_seconds": "histogram",
    }
    edge = {"client": "user", "server": "web"}
    requests = only(samples, "traces_service_graph_request_total", **edge)
    assert increments(requests) == [150.0] * 4 + [300.0] * 4
    failed = only(samples, "traces_service_graph_request_failed_total", **edge)
    assert increments(failed) == pytest.approx([15.0] * 4 + [150.0] * 4)
    for name, p95 in (("server", [0.05, 1.2]), ("client", [0.06, 1.5])):
        buckets = {
            dict(ls)["le"]: pts
            for (n, ls), pts in samples.items()
            if n == f"traces_service_graph_request_{name}_seconds_bucket"
        }
        assert list(buckets) == [repr(b) for b in BUCKETS] + ["+Inf"]
        per_tick = {le: increments(pts) for le, pts in buckets.items()}
        for i in range(8):
            pairs = [(float(le), per_tick[le][i]) for le in per_tick]
            assert pairs[-1][1] == pytest.approx(increments(requests)[i])  # +Inf = requests
            assert bucket_quantile(0.95, pairs) == pytest.approx(p95[i // 4], rel=1e-9)
    assert not any(n.endswith(("_sum", "_count")) for n, _ in samples)
    assert stats.series == 2 + 2 * (len(BUCKETS) + 1) and stats.samples == 8 * stats.series


def test_an_edge_without_requests_carries_one_per_second_and_no_errors_series() -> None:
    c = case(
        "c1",
        [
            series("db", "latency_server", minutes(2), np.array([0.01, 0.01]), client="api"),
            series("db", "latency_client", minutes(1, T0 + 300), np.array([0.02]), client="api"),
        ],
    )
    _, samples = parse(write([c])[0])
    requests = only(samples, "traces_service_graph_request_total", client="api", server="db")
    assert [t - T0 for t, _ in requests] == [-45, -30, -15, 0, 15, 30, 45, 60, 255, 270, 285, 300]
    assert increments(requests) == [15.0] * 12
    assert not [n for n, _ in samples if n == "traces_service_graph_request_failed_total"]


def test_errors_without_requests_at_a_tick_add_nothing() -> None:
    c = case(
        "c1",
        [
            series("db", "requests", minutes(1), np.array([4.0]), client="api"),
            series("db", "errors", minutes(2), np.array([0.5, 0.5]), client="api"),
        ],
    )
    _, samples = parse(write([c])[0])
    failed = only(samples, "traces_service_graph_request_failed_total")
    assert increments(failed) == [30.0] * 4 + [0.0] * 4


def test_configured_metric_names_are_written() -> None:
    names = PromQLNames(
        requests="calls_total",
        failed="calls_failed_total",
        server_seconds="calls_server_seconds",
        client_seconds="calls_client_seconds",
    )
    c = case("c", [series("api", "latency_server", minutes(1), np.array([0.1]), client="web")])
    out = io.StringIO()
    write_openmetrics([c], out, names=names)
    types, samples = parse(out.getvalue())
    assert types == {"calls": "counter", "calls_server_seconds": "histogram"}
    assert {n for n, _ in samples} == {"calls_total", "calls_server_seconds_bucket"}


def test_a_signal_no_exporter_publishes_is_refused() -> None:
    bad = MetricSeries("api", "latency/from:web", "latency", minutes(1), np.array([1.0]))
    with pytest.raises(DatasetError, match="no exporter signal"):
        write([case("c", [bad])])
    no_client = MetricSeries("api", "requests", "workload", minutes(1), np.array([1.0]))
    with pytest.raises(DatasetError, match="has no client"):
        write([case("c", [no_client])])


def test_nothing_to_write_is_an_empty_file() -> None:
    text, stats = write([case("c", [])])
    assert text == "# EOF\n" and stats == WriteStats(0, 0, 0.0, 0.0)


# --- the exact p95 ----------------------------------------------------------------------------


def test_the_split_gives_prometheus_the_p95_for_random_values() -> None:
    rng = random.Random(7)
    values = [BUCKETS[0] * 0.95 * (BUCKETS[-1] / (BUCKETS[0] * 0.95)) ** rng.random()
              for _ in range(5000)]  # fmt: skip
    fractions = p95_fractions(np.array(values))
    assert fractions.shape == (len(values), len(BUCKETS) + 1)
    assert (fractions >= 0).all() and np.allclose(fractions.sum(axis=1), 1.0, rtol=1e-12)
    for v, row in zip(values, fractions, strict=True):
        for n in (1.0, 15.0, 0.37, 12345.0):
            assert p95_of(row, n) == pytest.approx(v, rel=1e-9), (v, n)


def test_the_split_at_the_boundaries() -> None:
    edges = [0.0, *BUCKETS]
    values: list[float] = []
    for lo, hi in itertools.pairwise(edges):
        values += [hi, hi * (1 - 1e-12), lo + 0.95 * (hi - lo), lo + (hi - lo) * 0.9500001]
        if lo > 0:
            values += [lo * (1 + 1e-12), lo + (hi - lo) * 1e-9]
    values = [v for v in values if v >= 0.95 * BUCKETS[0]]
    for v, row in zip(values, p95_fractions(np.array(values)), strict=True):
        assert p95_of(row, 15.0) == pytest.approx(v, rel=1e-9), v


def test_values_outside_the_buckets_are_clamped() -> None:
    low, high = 0.95 * BUCKETS[0], BUCKETS[-1]
    values = [0.0, -1.0, 1e-9, low * 0.5, high * 1.0001, 1e6]
    got = [p95_of(row, 15.0) for row in p95_fractions(np.array(values))]
    assert got == pytest.approx([low, low, low, low, high, high], rel=1e-12)


# --- placing recordings in time ---------------------------------------------------------------


def test_shifted_moves_every_time() -> None:
    c = case("c", [series("api", "cpu", minutes(3), np.ones(3))])
    s = shifted(c, 3600.0)
    assert s.inject_time == c.inject_time + 3600
    assert s.alert_window == (c.alert_window[0] + 3600, c.alert_window[1] + 3600)
    assert s.baseline_window == (c.baseline_window[0] + 3600, c.baseline_window[1] + 3600)
    assert s.metrics[0].times.tolist() == (c.metrics[0].times + 3600).tolist()
    assert s.changes[0].at == c.changes[0].at + 3600
    assert c.metrics[0].times[0] == T0  # the original is untouched
    assert shifted(c, 0.0) is c


def test_recordings_are_laid_end_to_end() -> None:
    a = case("a", [series("api", "cpu", minutes(40), np.ones(40))])
    b1 = case("b1", [series("api", "cpu", minutes(20, T0 + 600), np.ones(20))], timeline="b",
              start=T0 + 600, inject=T0 + 1200, end=T0 + 1500)  # fmt: skip
    b2 = case("b2", [], timeline="b", start=T0 + 1500, inject=T0 + 1800, end=T0 + 5000)
    later = T0 + 30 * DAY
    far = case("far", [series("web", "cpu", minutes(10, later), np.ones(10))],
               start=later, inject=later + 200, end=later + 600)  # fmt: skip
    placed = place([b1, a, b2, far])
    assert [p.case_id for p in placed] == ["b1", "a", "b2", "far"]
    assert placed[1] is a  # the first recording stays
    a_end = max(float(a.metrics[0].times[-1]), a.alert_window[1])
    moved = placed[0].inject_time - b1.inject_time
    assert placed[2].inject_time - b2.inject_time == moved  # one timeline moves as one
    assert moved % 60 == 0
    assert a_end + MARGIN_S <= placed[0].baseline_window[0] < a_end + MARGIN_S + 60
    b_end = b2.alert_window[1] + moved
    assert b_end + MARGIN_S <= placed[3].baseline_window[0] < b_end + MARGIN_S + 60  # earlier
    # the furthest an agent's check reads before a case's alert stays in its own recording
    assert placed[0].alert_window[0] - LOOKBACK_S > a_end + 5 * 60
    assert place([a]) == [a]


# --- merging cases of one recording -----------------------------------------------------------


def test_cases_of_one_timeline_share_their_series() -> None:
    one = case("one", [series("api", "memory", minutes(3), np.array([1.0, 2.0, 3.0]))],
               timeline="rec")  # fmt: skip
    two = case("two", [series("api", "memory", minutes(3, T0 + 120), np.array([9.0, 4.0, 5.0]))],
               timeline="rec")  # fmt: skip
    text, stats = write([one, two])
    _, samples = parse(text)
    memory = only(samples, "container_memory_working_set_bytes")
    assert [v for _, v in memory] == [1.0] * 4 + [2.0] * 4 + [3.0] * 4 + [4.0] * 4 + [5.0] * 4
    assert stats.series == 1 and stats.start == T0 - 45 and stats.end == T0 + 240


def test_separate_timelines_are_one_series_each_resampled_alone() -> None:
    fine = case("fine", [series("api", "memory", T0 + np.arange(1.0, 31.0), np.ones(30))])
    coarse = case("coarse", [series("api", "memory", minutes(2, T0 + DAY), np.full(2, 2.0))],
                  start=T0 + DAY - 60, inject=T0 + DAY, end=T0 + DAY + 60)  # fmt: skip
    _, samples = parse(write([fine, coarse])[0])
    memory = only(samples, "container_memory_working_set_bytes")
    assert [(t - T0, v) for t, v in memory] == [(15, 1.0), (30, 1.0)] + [
        (DAY + d, 2.0) for d in range(-45, 61, 15)
    ]


def test_a_file_is_split_into_one_file_per_two_hour_block(tmp_path: Path) -> None:
    long = case("long", [series("api", "cpu", minutes(300), np.ones(300)),
                         series("api", "memory", minutes(300), np.ones(300))])  # fmt: skip
    text, _ = write([long])
    whole = tmp_path / "all.om"
    whole.write_text(text, encoding="utf-8")
    parts = split_by_block(whole, tmp_path / "parts")
    every = parse(text)[1]
    assert len(parts) == len({int(t // 7200) for pts in every.values() for t, _ in pts}) >= 3
    samples = 0
    for part in parts:
        lines = part.read_text(encoding="utf-8").splitlines()
        assert lines[-1] == "# EOF"
        families, got = parse(part.read_text(encoding="utf-8"))
        assert set(families) == {
            "container_cpu_usage_seconds",
            "container_memory_working_set_bytes",
        }
        block = {int(t // 7200) for series_ in got.values() for t, _ in series_}
        assert len(block) == 1
        samples += sum(len(v) for v in got.values())
    assert samples == sum(len(v) for v in every.values())


def test_a_call_edge_without_series_still_carries_traffic() -> None:
    quiet = replace(
        case("quiet", [series("web", "cpu", minutes(3), np.ones(3))]),
        call_edges=(CallEdge("web", "api"),),
    )
    _, samples = parse(write([quiet])[0])
    calls = only(samples, PromQLNames().requests, client="web", server="api")
    assert [t for t, _ in calls] == [
        t for t, _ in only(samples, "container_cpu_usage_seconds_total")
    ]
    assert increments(calls) == [15.0] * len(calls)  # 1 req/s
