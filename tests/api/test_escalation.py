"""Escalation in `serve`: when the agent's tools refute every lead of the plan, the next
plan comes from a new program (stage 2), the agent checks it, and the incident keeps what
was ruled out and the attempts. No model: the deterministic floor and search."""

from __future__ import annotations

from typing import Any

import httpx

from stackgraph.api import create_app
from stackgraph.api.threaded import serve_in_thread
from stackgraph.config import Settings
from stackgraph.ingest import GraphIngestor
from stackgraph.schema import EdgeRecord, NodeRecord, NodeRef, RecordBatch
from stackgraph.store import GraphStore

from .conftest import firing, incident

TOKEN = "escalation-token"
HEALTHY = ("inventory", "cart", "shipping")


def svc(name: str) -> NodeRef:
    return NodeRef("Service", {"name": name})


def shop(store: GraphStore, failing: float) -> None:
    """An edge proxy calls web; web calls three critical services and checkout, which calls
    payment (errors at `failing`); every other call is healthy."""
    crit = {"edge": "low", "web": "low", "checkout": "low", "payment": "low",
            **dict.fromkeys(HEALTHY, "critical")}  # fmt: skip
    batch = RecordBatch(nodes=[NodeRecord("Service", {"name": n}, {"criticality": c})
                               for n, c in crit.items()])  # fmt: skip
    calls = [("edge", "web"), *(("web", n) for n in (*HEALTHY, "checkout")),
             ("checkout", "payment")]  # fmt: skip
    for src, dst in calls:
        rate = failing if dst == "payment" else 0.0
        batch.edges.append(EdgeRecord("CALLS", svc(src), svc(dst), {
            "error_rate": rate, "latency_p95_ms": 40.0, "trace_count": 3000}, "Tempo"))  # fmt: skip
    with GraphIngestor(store, who="test") as writer:
        assert not writer.write(batch).rejected


def on_web(fingerprint: str) -> dict[str, Any]:
    body = firing(fingerprint)
    for alert in body["alerts"]:
        alert["labels"]["service"] = "web"
    body["commonLabels"]["service"] = body["groupLabels"]["service"] = "web"
    return body


def investigated(settings: Settings, store: GraphStore, fp: str) -> tuple[dict[str, Any], str]:
    settings = settings.model_copy(update={"investigate_attempts": 2})
    app = create_app(settings, store=store, token=TOKEN, memory_fn=lambda st: None)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with serve_in_thread(app) as url:
        assert httpx.post(f"{url}/api/v1/alerts", json=on_web(fp), headers=auth).is_success
        done = incident(url, TOKEN, lambda d: d["state"] == "done")
        return done, httpx.get(f"{url}/metrics", headers=auth).text


def test_refuted_leads_escalate_to_a_new_program(settings: Settings, store: GraphStore) -> None:
    """Nothing fails on the graph: the agent's graph checks refute the first plan's three
    leads (web, which the alert fired on, then the critical ones: nothing voted), so a
    second plan comes from a new program, whose leads are other candidates."""
    shop(store, failing=0.0)
    done, metrics = investigated(settings, store, "fp-esc")
    attempts = done["plan"]["program"]["attempts"]
    assert (attempts[0]["stage"], attempts[0]["sufficient"]) == (1, False)
    first = attempts[0]["top"]
    assert attempts[0]["program"] == "default" and first[0] == "web"
    assert set(first[1:]) < set(HEALTHY), first
    assert len(attempts) == 2 and attempts[1]["stage"] == 2
    assert not set(attempts[1]["top"]) & set(first)  # no refuted lead is offered again
    assert done["plan"]["program"]["origin"] == "composed"
    states = {h["suspect"]: h["state"] for h in done["hypotheses"]}
    assert all(states[s] == "Refuted" for s in first), states  # what was ruled out stays
    assert "stackgraph_escalations_total 1.0" in metrics


def test_a_plan_the_agent_concludes_on_is_not_escalated(
    settings: Settings, store: GraphStore
) -> None:
    shop(store, failing=0.12)
    done, metrics = investigated(settings, store, "fp-ok")
    assert done["conclusion"] == "payment" and "attempts" not in done["plan"]["program"]
    assert "stackgraph_escalations_total 0.0" in metrics
