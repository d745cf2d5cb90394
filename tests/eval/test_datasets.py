"""Dataset adapters (and the seeded set): counts, labels, windows and telemetry shape."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import yaml

from stackgraph.eval.datasets import (
    ADAPTERS,
    EDGE_SIGNALS,
    POD_SIGNALS,
    SERVICE_SIGNALS,
    SIGNAL_KIND,
    USER,
    Case,
    DatasetError,
    load_cases,
)
from stackgraph.eval.seeded import DEFAULT_PATH, load_seeded

_SEEDED_INCIDENTS = yaml.safe_load((DEFAULT_PATH / "incidents.yaml").read_text(encoding="utf-8"))

EXPECTED = {
    "nezha": (
        56,
        {
            "cpu_contention": 16,
            "network_delay": 16,
            "cpu_consumed": 10,
            "return": 7,
            "exception": 7,
        },
    ),
    "changerca": (
        51,
        {
            "exception": 7,
            "return": 6,
            "memoryleak": 5,
            "wrongsql": 4,
            "scaledown": 4,
            "wrongvalue": 4,
            "misspara": 4,
            "misscall": 4,
            "redis": 3,
            "inconsistent": 3,
            "access": 3,
            "config": 2,
            "paraorder": 2,
        },
    ),
    "rcd-sockshop": (50, {"cpu": 25, "mem": 25}),
    "nezha-tt": (28, {"exception": 13, "return": 11, "cpu_contention": 4}),
    "seeded": (
        len(_SEEDED_INCIDENTS),
        dict(Counter(str(i["fault"]) for i in _SEEDED_INCIDENTS)),
    ),
}
ENTRY = {
    "nezha": {"frontend"},
    "changerca": {"frontend"},
    "rcd-sockshop": {"front-end"},
    "nezha-tt": {"ts-gateway-service"},
    "seeded": {"frontend", "gateway"},
}
SIGNALS = {
    "nezha": {"cpu", "memory", "network_rx", "network_tx", *EDGE_SIGNALS},
    "changerca": {"cpu", "memory", "errors", "latency_server"},
    "rcd-sockshop": {"cpu", "memory", "requests", "latency_server"},
    "nezha-tt": {
        "cpu",
        "memory",
        "network_rx",
        "network_tx",
        "requests",
        "latency_server",
        "latency_client",
    },
    "seeded": {"cpu", "memory", "network_rx", "network_tx", *EDGE_SIGNALS},
}
# Datasets with an entry signal, i.e. a user -> symptom edge series.
USER_EDGE = {"nezha", "changerca", "nezha-tt", "seeded"}
# Plausible ranges in the model's units: catches a missed unit conversion.
RANGES = {
    "cpu": (0.0, 64.0),
    "memory": (2.0**20, 2.0**36),
    "network_rx": (0.0, 1e9),
    "network_tx": (0.0, 1e9),
    "requests": (0.0, 1e5),
    "errors": (0.0, 1.0),
    "latency_server": (0.0, 60.0),
    "latency_client": (0.0, 60.0),
}
NAMES = sorted(EXPECTED)

CaseLoader = Callable[[str], list[Case]]


@pytest.fixture(scope="session")
def cases_of(load_dataset: CaseLoader) -> CaseLoader:
    """``cases_of(name)``: a real dataset through ``load_dataset``, or the seeded set."""
    seeded = load_seeded()
    return lambda name: seeded if name == "seeded" else load_dataset(name)


@pytest.mark.parametrize("name", NAMES)
def test_counts_and_fault_types(name: str, cases_of: CaseLoader) -> None:
    cases = cases_of(name)
    n, types = EXPECTED[name]
    assert len(cases) == n
    assert Counter(c.fault_type for c in cases) == types
    assert len({c.case_id for c in cases}) == n


@pytest.mark.parametrize("name", NAMES)
def test_labels_and_symptom(name: str, cases_of: CaseLoader) -> None:
    cases = cases_of(name)
    for c in cases:
        assert c.root_cause in c.services
        assert len(set(c.services)) == len(c.services)
        # chosen without the label: the graph's entry point
        assert c.symptom_service in ENTRY[name]
        assert not any(e.server == c.symptom_service for e in c.call_edges)
        assert any(e.client == c.symptom_service for e in c.call_edges)
    # the symptom is the root cause only when the entry service itself was faulted
    assert len({c.root_cause for c in cases}) > 1


@pytest.mark.parametrize("name", NAMES)
def test_windows_are_honest(name: str, cases_of: CaseLoader) -> None:
    cases = sorted(cases_of(name), key=lambda c: c.inject_time)
    for prev, cur, nxt in zip([None, *cases[:-1]], cases, [*cases[1:], None], strict=True):
        a0, a1 = cur.alert_window
        b0, b1 = cur.baseline_window
        assert a0 == cur.inject_time < a1
        assert b0 < b1 <= cur.inject_time
        if nxt is not None:
            assert a1 <= nxt.inject_time
        if prev is not None and name != "rcd-sockshop":
            # the baseline skips the previous fault's start (its effect, where possible)
            assert b0 > prev.inject_time


@pytest.mark.parametrize("name", NAMES)
def test_timelines(name: str, cases_of: CaseLoader) -> None:
    cases = cases_of(name)
    assert all(c.timeline for c in cases)
    if name.startswith("nezha"):  # one recording per day
        days = {"nezha": {"2022-08-22", "2022-08-23"}, "nezha-tt": {"2023-01-29"}}[name]
        assert {c.timeline for c in cases} == days
        assert all(c.case_id.startswith(c.timeline) for c in cases)
    else:  # separate recordings
        assert all(c.timeline == c.case_id for c in cases)


@pytest.mark.parametrize("name", NAMES)
def test_series_are_signals_in_window(name: str, cases_of: CaseLoader) -> None:
    seen: set[str] = set()
    for c in cases_of(name):
        assert c.metrics
        graph = {(e.client, e.server) for e in c.call_edges}
        # USER is not a service (Sock Shop has a service named "user", and no user edge)
        user_is_service = USER in c.services
        assert user_is_service or all(USER not in e for e in graph)
        root_alert = root_base = False
        for m in c.metrics:
            seen.add(m.name)
            assert m.name in SIGNAL_KIND and m.kind == SIGNAL_KIND[m.name]
            assert m.service in c.services
            if m.name in POD_SIGNALS:
                assert m.client is None
            elif m.client is None:  # a service's own report: the entry's errors (Nezha's KPI)
                assert m.name in SERVICE_SIGNALS and m.service == c.symptom_service
            else:
                assert m.name in EDGE_SIGNALS and m.client is not None
                if m.client == USER and not user_is_service:
                    assert m.service == c.symptom_service
                else:
                    assert (m.client, m.service) in graph
            assert m.times.dtype == np.float64 and m.values.dtype == np.float64
            assert m.times.shape == m.values.shape and m.times.size > 0
            assert np.all(np.diff(m.times) > 0)
            assert np.all(np.isfinite(m.values))
            lo, hi = RANGES[m.name]
            assert lo <= m.values.min() and m.values.max() <= hi, (c.case_id, m.name)
            assert m.times[0] >= c.baseline_window[0] and m.times[-1] < c.alert_window[1]
            if m.service == c.root_cause:
                root_alert |= bool(np.any(m.times >= c.alert_window[0]))
                root_base |= bool(np.any(m.times < c.baseline_window[1]))
        assert root_alert and root_base, c.case_id
        if name in USER_EDGE:
            assert any(m.client == USER for m in c.metrics), c.case_id
    assert seen == SIGNALS[name]


@pytest.mark.parametrize("name", NAMES)
def test_every_pod_has_cpu_and_memory(name: str, cases_of: CaseLoader) -> None:
    for c in cases_of(name):
        pods = {(m.service, m.name) for m in c.metrics if m.client is None}
        measured = [s for s in c.services if {(s, "cpu"), (s, "memory")} <= pods]
        if name == "nezha-tt":  # a few pods' columns are 0 all day: left out
            assert len(measured) >= 0.8 * len(c.services), c.case_id
        else:
            assert len(measured) == len(c.services), c.case_id


def test_requests_split_among_callers(load_dataset: CaseLoader) -> None:
    # rcd: carts' request rate is spread evenly onto its two static callers
    c = load_dataset("rcd-sockshop")[0]
    carts = [m for m in c.metrics if m.service == "carts" and m.name == "requests"]
    assert {m.client for m in carts} == {"front-end", "orders"}
    np.testing.assert_allclose(carts[0].values, carts[1].values)


def test_changes_only_in_changerca_and_seeded(cases_of: CaseLoader) -> None:
    for c in cases_of("changerca"):
        assert c.changes
        assert all(ch.at < c.alert_window[1] and ch.service in c.services for ch in c.changes)
    assert not any(c.changes for c in cases_of("nezha"))
    assert not any(c.changes for c in cases_of("rcd-sockshop"))


def test_wrong_folder_raises(tmp_path: Path) -> None:
    for name in ADAPTERS:
        with pytest.raises(DatasetError, match=str(tmp_path)):
            load_cases(name, tmp_path)
    with pytest.raises(DatasetError, match="does not exist"):
        load_cases("nezha", tmp_path / "nope")
    with pytest.raises(DatasetError, match="unknown dataset"):
        load_cases("nope", tmp_path)


def test_changerca_keeps_each_experiments_own_alert(
    load_dataset: Callable[[str], list[Case]],
) -> None:
    for c in load_dataset("changerca"):
        assert c.recorded_alert is not None
        assert c.inject_time <= c.recorded_alert < c.alert_window[1]
    assert all(c.recorded_alert is None for c in load_dataset("nezha"))


def test_train_ticket_edges_come_from_its_spans(load_dataset: CaseLoader) -> None:
    """Kind-less spans paired by the telemetry lane's reader: a call graph of dozens of
    edges, each edge series only in the minutes that have trace files."""
    cases = load_dataset("nezha-tt")
    edges = {(e.client, e.server) for e in cases[0].call_edges}
    assert len(edges) > 40 and ("ts-preserve-service", "ts-contacts-service") in edges
    spans = [m for m in cases[0].metrics if m.client not in (None, "user")]
    assert spans and {m.name for m in spans} == {"requests", "latency_server", "latency_client"}
    assert max(len(m.times) for m in spans) <= 5  # 3 trace minutes a fault, plus neighbours
    # the caller's exit span encloses its callee's span, network included: mostly longer
    # (not always: a producer's span, ts-food-service -> ts-delivery-service, ends at send)
    by = {(m.client, m.service, m.name): m for m in spans}
    pairs = [(by[(c, s, "latency_client")], m) for (c, s, n), m in by.items()
             if n == "latency_server"]  # fmt: skip
    assert pairs and all(np.array_equal(w.times, m.times) for w, m in pairs)
    ratio = np.concatenate([w.values / m.values for w, m in pairs])
    assert np.median(ratio) > 1.0 and np.mean(ratio >= 1.0) > 0.9
