"""Real-dataset adapters: counts, labels, windows and telemetry shape."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from stackgraph.eval.datasets import ADAPTERS, METRIC_KINDS, Case, DatasetError, load_cases

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
}
ENTRY = {"nezha": "frontend", "changerca": "frontend", "rcd-sockshop": "front-end"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_counts_and_fault_types(name: str, load_dataset: Callable[[str], list[Case]]) -> None:
    cases = load_dataset(name)
    n, types = EXPECTED[name]
    assert len(cases) == n
    assert Counter(c.fault_type for c in cases) == types
    assert len({c.case_id for c in cases}) == n


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_labels_and_symptom(name: str, load_dataset: Callable[[str], list[Case]]) -> None:
    cases = load_dataset(name)
    for c in cases:
        assert c.root_cause in c.services
        assert len(set(c.services)) == len(c.services)
        # chosen without the label: the graph's entry point, identical in every case
        assert c.symptom_service == ENTRY[name]
        assert not any(e.server == c.symptom_service for e in c.call_edges)
    # the symptom is the root cause only when the entry service itself was faulted
    assert len({c.root_cause for c in cases}) > 1


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_windows_are_honest(name: str, load_dataset: Callable[[str], list[Case]]) -> None:
    cases = sorted(load_dataset(name), key=lambda c: c.inject_time)
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


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_metrics_aligned_and_in_window(
    name: str, load_dataset: Callable[[str], list[Case]]
) -> None:
    for c in load_dataset(name):
        assert c.metrics
        services_with_alert_data = set()
        for m in c.metrics:
            assert m.service in c.services
            assert m.kind in METRIC_KINDS
            assert m.times.dtype == np.float64 and m.values.dtype == np.float64
            assert m.times.shape == m.values.shape and m.times.size > 0
            assert np.all(np.diff(m.times) >= 0)
            assert m.times[0] >= c.baseline_window[0] and m.times[-1] < c.alert_window[1]
            if np.any(m.times >= c.alert_window[0]):
                services_with_alert_data.add(m.service)
        assert c.root_cause in services_with_alert_data


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_call_edges(name: str, load_dataset: Callable[[str], list[Case]]) -> None:
    for c in load_dataset(name):
        assert c.call_edges
        for e in c.call_edges:
            assert e.client in c.services and e.server in c.services
            assert 0.0 <= e.error_rate <= 1.0
            assert e.trace_count >= 0.0


def test_changes_only_in_changerca(load_dataset: Callable[[str], list[Case]]) -> None:
    for c in load_dataset("changerca"):
        assert c.changes
        assert all(ch.at < c.alert_window[1] and ch.service in c.services for ch in c.changes)
    assert not any(c.changes for c in load_dataset("nezha"))


def test_wrong_folder_raises(tmp_path: Path) -> None:
    for name in ADAPTERS:
        with pytest.raises(DatasetError, match=str(tmp_path)):
            load_cases(name, tmp_path)
    with pytest.raises(DatasetError, match="does not exist"):
        load_cases("nezha", tmp_path / "nope")
    with pytest.raises(DatasetError, match="unknown dataset"):
        load_cases("nope", tmp_path)
