"""The self-seeded set: its distractors and the entry edge an alert is found on."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from stackgraph.eval.datasets import USER, Case, MetricSeries
from stackgraph.eval.seeded import DEFAULT_PATH, STALE_BEFORE_S, load_seeded

INCIDENTS = {
    str(i["id"]): i
    for i in yaml.safe_load((DEFAULT_PATH / "incidents.yaml").read_text(encoding="utf-8"))
}


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return load_seeded()


def _edge(case: Case, client: str, server: str, name: str) -> MetricSeries:
    (m,) = [x for x in case.metrics if (x.client, x.service, x.name) == (client, server, name)]
    return m


def _median(m: MetricSeries, before: float | None = None, after: float | None = None) -> float:
    mask = np.ones(m.times.size, bool)
    if before is not None:
        mask &= m.times < before
    if after is not None:
        mask &= m.times > after
    return float(np.median(m.values[mask]))


def test_generation_is_deterministic(cases: list[Case]) -> None:
    again = load_seeded()
    for a, b in zip(cases, again, strict=True):
        assert len(a.metrics) == len(b.metrics)
        for x, y in zip(a.metrics, b.metrics, strict=True):
            np.testing.assert_array_equal(x.values, y.values)


def test_stale_edge_stops_long_before_the_fault_with_old_errors(cases: list[Case]) -> None:
    stale_cases = [c for c in cases if INCIDENTS[c.case_id].get("stale_error")]
    assert stale_cases
    for c in stale_cases:
        client, server = INCIDENTS[c.case_id]["stale_error"]
        assert server != c.root_cause
        on_edge = [m for m in c.metrics if (m.client, m.service) == (client, server)]
        assert {m.name for m in on_edge} == {
            "requests",
            "errors",
            "latency_server",
            "latency_client",
        }
        for m in on_edge:
            # seen during the baseline, gone for more than 15 min when the fault starts
            assert m.times[0] == c.baseline_window[0]
            assert m.times[-1] <= c.inject_time - STALE_BEFORE_S < c.inject_time - 900.0
        assert _median(_edge(c, client, server, "errors")) > 0.2
        # every other edge is live through the alert window
        others = [m for m in c.metrics if m.client and (m.client, m.service) != (client, server)]
        assert all(m.times[-1] > c.inject_time for m in others)


def test_entry_edge_carries_the_symptom_and_shows_the_fault(cases: list[Case]) -> None:
    for c in cases:
        user = {m.name: m for m in c.metrics if m.client == USER}
        assert set(user) == {"requests", "errors", "latency_server", "latency_client"}
        assert all(m.service == c.symptom_service for m in user.values())
        t0 = c.inject_time
        lat = user["latency_server"]
        assert _median(lat, after=t0) > 1.15 * _median(lat, before=t0), c.case_id
        if c.fault_type == "errors":
            err = user["errors"]
            assert _median(err, after=t0) > 5 * _median(err, before=t0), c.case_id


def test_root_signal_moves_and_red_herring_is_healthy(cases: list[Case]) -> None:
    moved = {"cpu": "cpu", "memory": "memory"}
    for c in cases:
        t0 = c.inject_time
        if c.fault_type in moved:
            (m,) = [
                x
                for x in c.metrics
                if x.service == c.root_cause and x.name == moved[c.fault_type] and not x.client
            ]
            assert _median(m, after=t0) > 1.5 * _median(m, before=t0)
        else:  # latency or errors: on every edge into the root
            name = "errors" if c.fault_type == "errors" else "latency_server"
            into_root = [m for m in c.metrics if m.service == c.root_cause and m.name == name]
            assert into_root
            for m in into_root:
                assert _median(m, after=t0) > 3 * _median(m, before=t0)
        herring = INCIDENTS[c.case_id].get("red_herring")
        if herring:
            assert any(ch.service == herring and ch.at < t0 for ch in c.changes)
            assert herring != c.root_cause


def test_criticality_from_the_catalog(cases: list[Case]) -> None:
    for c in cases:
        assert set(c.criticality) <= set(c.services)
        healthy_critical = [
            s for s, v in c.criticality.items() if v == "critical" and s != c.root_cause
        ]
        assert healthy_critical
