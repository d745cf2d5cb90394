"""`stackgraph eval --feedback`: each case's graph also holds the root causes users confirmed
for the cases before it, as the API's feedback writes them, so the replay measures the plans
a platform gets once its users give feedback. The history prior reads them; it breaks ties
and never outvotes this alert's evidence."""

from __future__ import annotations

import shutil

from sgtest import require

from stackgraph.config import Settings
from stackgraph.eval.alerting import AlertTime
from stackgraph.eval.harness import evaluate
from stackgraph.eval.replay import case_alert, confirmed
from stackgraph.eval.seeded import load_seeded
from stackgraph.store import GraphStore


def test_a_confirmed_incident_is_written_as_the_apis_feedback_writes_it() -> None:
    case = load_seeded()[0]
    alert = case_alert(case, AlertTime(case.inject_time + 60, "detected"))
    batch = confirmed(case, alert, case.inject_time + 60)
    causes = [e for e in batch.edges if e.type == "ROOT_CAUSED_BY"]
    assert [(e.dst.key["name"], str(e.status), e.confidence) for e in causes] == [
        (case.root_cause, "Active", 1.0)
    ]
    affects = [e.dst.key["name"] for e in batch.edges if e.type == "AFFECTS"]
    assert affects == [case.symptom_service]


def test_feedback_reaches_later_plans_as_a_prior_only(
    store: GraphStore, settings: Settings
) -> None:
    require(all(shutil.which(b) for b in ("prometheus", "promtool")), "Debian prometheus")
    plain = evaluate("seeded", None, store, settings=settings, limit=3, attempts=0,
                     ablation=True)  # fmt: skip
    fed = evaluate("seeded", None, store, settings=settings, limit=3, attempts=0,
                   ablation=True, feedback=True)  # fmt: skip
    assert any(n.startswith("feedback: each case's graph") for n in fed["notes"])
    assert not any(n.startswith("feedback:") for n in plain["notes"])
    cases = load_seeded()[:3]
    for i, (before, after) in enumerate(zip(plain["cases"], fed["cases"], strict=True)):
        past = {c.root_cause for c in cases[:i]}
        remembered = {s for s, v in after["votes"].items() if v.get("history", 0) > 0}
        assert remembered == past, (i, remembered)  # never its own case's label
        assert not any(v.get("history", 0) for v in before["votes"].values())
        # evidence separates seeded's candidates, so the past only ever breaks ties
        assert after["ranks"] == before["ranks"], i
