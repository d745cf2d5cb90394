"""The replay harness on the self-seeded set, through the real writer and read path."""

from __future__ import annotations

import json

import pytest

from stackgraph.eval.baselines import BASELINES
from stackgraph.eval.harness import evaluate
from stackgraph.eval.replay import CaseMetrics, case_alert, case_records
from stackgraph.eval.scorecard import markdown, metrics
from stackgraph.eval.seeded import load_seeded
from stackgraph.store import GraphStore

SEEDED_AC1_FLOOR = 0.90
"""Measured 1.00 (24/24) when the read path landed; a regression sentinel, not accuracy."""


def test_seeded_set_has_distractors() -> None:
    cases = load_seeded()
    assert len(cases) >= 20
    assert sum(1 for c in cases if getattr(c, "stale_edges", ())) >= 5
    assert sum(1 for c in cases if any(ch.service != c.root_cause for ch in c.changes)) >= 10


def test_alert_never_names_the_root_cause() -> None:
    for case in load_seeded():
        alert = case_alert(case)
        assert alert.labels["service"] == case.symptom_service
        text = json.dumps([dict(alert.labels), dict(alert.annotations)])
        if case.root_cause != case.symptom_service:
            assert case.root_cause not in text


def test_case_metrics_serve_only_the_window() -> None:
    case = load_seeded()[0]
    m = CaseMetrics(case)
    assert "cpu/cpu" in m.kinds(case.root_cause)
    base = m.values(case.root_cause, "cpu/cpu", *case.baseline_window)
    alert = m.values(case.root_cause, "cpu/cpu", *case.alert_window)
    assert len(base) == 20 and len(alert) == 10
    assert m.values("nope", "cpu/cpu", 0, 1e12) == []


def test_case_records_mark_stale_edges() -> None:
    case = next(c for c in load_seeded() if getattr(c, "stale_edges", ()))
    stale = [e for e in case_records(case).edges if str(e.status) == "Stale"]
    assert [(e.src.key["name"], e.dst.key["name"]) for e in stale] == list(case.stale_edges)


def test_scorecard_metrics() -> None:
    m = metrics([["a", "b"], ["b", "a"], ["c", "d"]], ["a", "a", "x"])
    assert m["ac1"] == pytest.approx(1 / 3, abs=1e-3)
    assert m["ac3"] == pytest.approx(2 / 3, abs=1e-3)
    assert m["mrr"] == pytest.approx((1 + 0.5) / 3, abs=1e-3)


def test_seeded_sentinel(store: GraphStore) -> None:
    card = evaluate("seeded", None, store, baselines={"random": BASELINES["random"]})
    sg = card["methods"]["stackgraph"]
    assert card["cases"] >= 20
    assert sg["ac1"] >= SEEDED_AC1_FLOOR
    assert sg["ac1"] > card["methods"]["random"]["ac1"]
    assert set(card["by_fault"]["stackgraph"]) == {"cpu", "errors", "latency", "memory"}
    assert "| stackgraph |" in markdown(card)
    again = evaluate("seeded", None, store, baselines={})
    assert {k: v for k, v in again["methods"]["stackgraph"].items() if k != "seconds_per_case"} == {
        k: v for k, v in sg.items() if k != "seconds_per_case"
    }
