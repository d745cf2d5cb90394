"""Baselines on a synthetic case (behaviour) and on real cases (output is a permutation)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest
from sgtest import require

from stackgraph.eval.baselines import BASELINES, accuracy_at
from stackgraph.eval.datasets import CallEdge, Case, MetricSeries

HAS_BARO = all(importlib.util.find_spec(m) for m in ("RCAEval", "pandas", "sklearn"))
BARO_NEEDS = "RCAEval, pandas and scikit-learn (the BARO baseline; scripts/install.sh)"


def synthetic_case(case_id: str = "synthetic-1") -> Case:
    """frontend -> {cart, product}; cart's latency jumps 10x in the alert window."""
    rng = np.random.default_rng(0)
    t = np.arange(0.0, 1200.0, 60.0)  # baseline 0..600, alert 600..1200
    metrics = []
    for svc in ("frontend", "cart", "product"):
        for name, kind, level in (("lat", "latency", 0.1), ("cpu", "cpu", 20.0)):
            v = level * (1 + 0.05 * rng.standard_normal(t.size))
            if svc == "cart" and name == "lat":
                v[t >= 600] *= 10
            if svc == "frontend" and name == "lat":
                v[t >= 600] *= 2  # the symptom propagates, weaker
            metrics.append(MetricSeries(svc, name, kind, t, v))
    return Case(
        dataset="synthetic",
        case_id=case_id,
        fault_type="delay",
        root_cause="cart",
        inject_time=600.0,
        alert_window=(600.0, 1200.0),
        baseline_window=(0.0, 600.0),
        symptom_service="frontend",
        services=("cart", "frontend", "product"),
        call_edges=(
            CallEdge("frontend", "cart"),
            CallEdge("frontend", "product"),
        ),
        metrics=tuple(metrics),
        changes=(),
        manifests=None,
    )


def test_random_is_deterministic_permutation() -> None:
    c = synthetic_case()
    r1, r2 = BASELINES["random"](c), BASELINES["random"](c)
    assert r1 == r2 and sorted(r1) == sorted(c.services)
    orders = {tuple(BASELINES["random"](synthetic_case(f"id-{i}"))) for i in range(20)}
    assert len(orders) > 1  # the seed depends on the case id


@pytest.mark.parametrize("name", ["largest-anomaly", "microrca", "simple-traversal"])
def test_obvious_spike_ranks_first(name: str) -> None:
    c = synthetic_case()
    ranks = BASELINES[name](c)
    assert sorted(ranks) == sorted(c.services)
    assert ranks[0] == "cart"


def _chain_case(spare_hot: bool) -> Case:
    """frontend -> checkout -> payment, frontend -> ads: checkout moves 10x, payment (the
    root cause, which checkout waits on) 3x; with `spare_hot`, ads (called, but not on the
    way down) moves 20x too, and search (called by no one here) 50x."""
    base = synthetic_case()
    rng = np.random.default_rng(1)
    t = np.arange(0.0, 1200.0, 60.0)
    factor = {"frontend": 2.0, "checkout": 10.0, "payment": 3.0, "ads": 20.0 if spare_hot else 1.0,
              "search": 50.0 if spare_hot else 1.0}  # fmt: skip
    metrics = []
    for svc, f in factor.items():
        v = 0.1 * (1 + 0.05 * rng.standard_normal(t.size))
        v[t >= 600] *= f
        metrics.append(MetricSeries(svc, "lat", "latency", t, v))
    edges = (CallEdge("frontend", "checkout"), CallEdge("checkout", "payment"),
             CallEdge("frontend", "ads"))  # fmt: skip
    return replace(base, root_cause="payment", services=tuple(sorted(factor)),
                   call_edges=edges, metrics=tuple(metrics))  # fmt: skip


def test_traversal_blames_where_the_walk_stops_not_the_largest_move() -> None:
    """The largest move is checkout's, but checkout waits on payment, which moved too and
    calls nothing anomalous: the walk from frontend stops at payment. A service off the
    walk (search: no caller reaches it) comes after it, however large its move."""
    c = _chain_case(spare_hot=False)
    assert BASELINES["largest-anomaly"](c)[0] == "checkout"
    assert BASELINES["simple-traversal"](c)[:3] == ["payment", "checkout", "frontend"]
    hot = BASELINES["simple-traversal"](_chain_case(spare_hot=True))
    assert hot[:2] == ["ads", "payment"]  # two end points, by their move
    assert hot.index("search") > hot.index("frontend")


def test_traversal_blames_the_alerting_service_when_no_callee_moved() -> None:
    c = synthetic_case()
    quiet = tuple(m for m in c.metrics if m.service != "cart")
    assert BASELINES["simple-traversal"](replace(c, metrics=quiet))[0] == "frontend"


def test_baro_on_synthetic() -> None:
    require(HAS_BARO, BARO_NEEDS)
    c = synthetic_case()
    ranks = BASELINES["baro"](c)
    assert sorted(ranks) == sorted(c.services) and ranks[0] == "cart"


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_a_case_without_a_baseline_gets_a_ranking_not_a_crash(name: str) -> None:
    """The plan's baseline can hold nothing (the first minutes a source ever recorded):
    every method still answers, with every service once."""
    if name == "baro":
        require(HAS_BARO, BARO_NEEDS)
    c = synthetic_case()
    alert_only = tuple(
        replace(m, times=m.times[m.times >= 600], values=m.values[m.times >= 600])
        for m in c.metrics
    )
    ranks = BASELINES[name](replace(c, metrics=alert_only))
    assert sorted(ranks) == sorted(c.services)


def test_accuracy_at() -> None:
    assert accuracy_at([["a", "b"], ["b", "a"]], ["a", "a"], 1) == 0.5
    assert accuracy_at([["a", "b"], ["b", "a"]], ["a", "a"], 2) == 1.0


@pytest.mark.parametrize("dataset", ["nezha", "changerca", "rcd-sockshop"])
@pytest.mark.parametrize("name", sorted(BASELINES))
def test_real_cases_give_permutations(
    dataset: str, name: str, load_dataset: Callable[[str], list[Case]]
) -> None:
    if name == "baro":
        require(HAS_BARO, BARO_NEEDS)
    cases = load_dataset(dataset)
    for c in cases[:: max(1, len(cases) // 8)]:
        ranks = BASELINES[name](c)
        assert sorted(ranks) == sorted(c.services)
