"""Through `serve`: the confidence an incident states learns from feedback on earlier
conclusions; the evidence's own confidence, the hypothesis' state and the first incident's
numbers stay what the tools found."""

from __future__ import annotations

import json
from typing import Any

from sgtest import stackgraph_cli

from stackgraph.api import create_app
from stackgraph.api.threaded import serve_in_thread
from stackgraph.config import Settings
from stackgraph.memory.knowledge import outcome_history
from stackgraph.store import GraphStore

from .test_escalation import shop
from .test_knowledge import investigate_and_confirm, stored

TOKEN = "knowledge-token"


def calibration(done: dict[str, Any]) -> dict[str, Any]:
    report = done["report"]
    assert report["calibration"] is not None, report
    return dict(report["calibration"])


def test_feedback_calibrates_what_later_incidents_state(
    settings: Settings, store: GraphStore
) -> None:
    shop(store, failing=0.12)
    settings = settings.model_copy(update={"api_correlation_window_s": 0})  # one per alert
    app = create_app(settings, store=store, token=TOKEN, memory_fn=lambda st: None)
    with serve_in_thread(app) as url:
        first = investigate_and_confirm(url, "c1", "checkout")  # users say: not payment
        assert first["conclusion"] == "payment"
        one = calibration(first)
        assert one["earlier"] == 0 and one["stated"] == one["evidence"]
        stored(store, "c1")
        second = investigate_and_confirm(url, "c2", "checkout")
        two = calibration(second)
        assert (two["earlier"], two["right"]) == (1, 0)
        assert two["evidence"] == one["evidence"]
        assert two["stated"] == round(2 * one["evidence"] / 3, 4)  # (0 + 2e) / (1 + 2)
        said = second["report"]["summary"]
        assert "0 of 1 earlier conclusion(s) on such evidence here were confirmed" in said
        stored(store, "c2")
        third = investigate_and_confirm(url, "c3", None)
    hyp = next(h for h in third["hypotheses"] if h["suspect"] == "payment")
    assert hyp["confidence"] == one["evidence"] and hyp["state"] == first["hypotheses"][0]["state"]
    three = calibration(third)
    assert (three["earlier"], three["right"], three["stated"]) == (
        2, 0, round(2 * one["evidence"] / 4, 4)
    )  # fmt: skip
    history = outcome_history(store)
    state = first["hypotheses"][0]["state"]
    assert one["state"] == three["state"] == state
    assert sorted(history.outcomes) == [(state, round(one["evidence"], 3), False)] * 2
    (row,) = json.loads(stackgraph_cli(settings, "trajectories", "calibration", "--json").stdout)
    assert row == {"state": state, "evidence": round(one["evidence"], 4), "earlier": 2,
                   "right": 0, "stated": three["stated"]}  # fmt: skip
