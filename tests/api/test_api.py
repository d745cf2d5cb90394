"""The HTTP API through TestClient on a real FalkorDB graph, with an injected plan."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from kube_apiserver import FakeKube

from stackgraph.api import create_app
from stackgraph.config import Settings
from stackgraph.rca.agent import Agent, ToolContext
from stackgraph.rca.model import Alert, Plan
from stackgraph.rca.outcome import IncidentOutcome
from stackgraph.store import GraphStore

from .conftest import firing, kube_args, payment_plan

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def make_client(
    settings: Settings,
    store: GraphStore,
    repo: Path | None = None,
    kube: FakeKube | None = None,
    **kw: Any,
) -> TestClient:
    def context(alert: Alert, plan: Plan) -> ToolContext:
        repos = {"payment": repo} if repo else {}
        return ToolContext(store=store, alert=alert, plan=plan, at=alert.starts_at, repos=repos,
                           **kube_args(kube))  # fmt: skip

    app = create_app(settings, store=store, plan_fn=kw.pop("plan_fn", payment_plan),
                     context_fn=context, token=TOKEN, **kw)  # fmt: skip
    return TestClient(app)


@pytest.fixture
def client(
    settings: Settings, platform: GraphStore, payment_repo: Path, payment_kube: FakeKube
) -> Iterator[TestClient]:
    """Git and Kubernetes both support payment: two lines of evidence, so it is Validated
    and written back as the root cause."""
    with make_client(settings, platform, payment_repo, payment_kube) as c:
        yield c


def wait_done(client: TestClient, fp: str, timeout: float = 60) -> dict[str, Any]:
    """The incident once finished (done or failed), read through the API."""
    deadline = time.monotonic() + timeout
    while True:
        r = client.get(f"/api/v1/incidents/{fp}", headers=AUTH)
        if r.status_code == 200 and r.json()["state"] in ("done", "failed"):
            return dict(r.json())
        assert time.monotonic() < deadline, f"incident {fp} did not finish: {r.text}"
        time.sleep(0.05)


def rows(store: GraphStore, query: str, **params: Any) -> list[list[Any]]:
    """Test-only inspection of what write-back stored."""
    return list(store._graph.ro_query(query, params).result_set)


def test_token_required_except_health_and_metrics(client: TestClient) -> None:
    assert client.post("/api/v1/alerts", json=firing()).status_code == 401
    bad = client.get("/api/v1/incidents", headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401 and bad.headers["www-authenticate"] == "Bearer"
    assert client.get("/api/v1/incidents", headers=AUTH).status_code == 200
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").json() == {"ready": True, "problems": []}
    assert client.get("/metrics").status_code == 200


def test_token_from_a_mounted_file(
    settings: Settings, platform: GraphStore, tmp_path: Path
) -> None:
    secret = tmp_path / "token"
    secret.write_text("from-file\n")
    app = create_app(settings.model_copy(update={"api_token_file": secret}), store=platform,
                     plan_fn=payment_plan)  # fmt: skip
    with TestClient(app) as c:
        ok = c.get("/api/v1/incidents", headers={"Authorization": "Bearer from-file"})
        assert ok.status_code == 200


def test_alert_to_incident_with_plan_evidence_report_and_write_back(
    client: TestClient, platform: GraphStore
) -> None:
    r = client.post("/api/v1/alerts", json=firing("fp-a"), headers=AUTH)
    assert r.status_code == 202 and r.json()["started"] == ["fp-a"]
    detail = wait_done(client, "fp-a")
    assert detail["state"] == "done" and detail["plan"]["anchor"] == "checkout"
    assert detail["conclusion"] == "payment" and detail["root_cause"] == "payment"
    hyp = {h["suspect"]: h for h in detail["hypotheses"]}
    assert hyp["payment"]["state"] == "Validated" and hyp["inventory"]["state"] == "Refuted"
    assert {e["tool"] for e in detail["evidence"]} >= {"query_stack_graph", "git_log",
                                                       "k8s_pod_status"}  # fmt: skip
    assert "Root cause: payment" in detail["report"]["summary"]
    assert detail["writeback"]["written"] is True, detail["writeback"]
    # write-back landed in FalkorDB through the single writer
    got = rows(platform, "MATCH (a:Alert {fingerprint:$f})-[:FIRED_ON]->(s:Service) "
               "MATCH (i:Incident {fingerprint:$f})-[:AFFECTS]->(s) "
               "RETURN s.name, i.incident_status, i.evidence_chain_json", f="fp-a")  # fmt: skip
    assert got[0][0] == "checkout" and got[0][1] == "open" and "git_log" in got[0][2]
    hyps = rows(platform, "MATCH (:Incident {fingerprint:$f})-[:EVALUATED_AS]->(h:Hypothesis) "
                "RETURN h.suspect_ref, h.state, h.rank ORDER BY h.rank", f="fp-a")  # fmt: skip
    assert hyps == [["Service:payment", "Validated", 1], ["Service:inventory", "Refuted", 2]]
    ev = rows(platform, "MATCH (h:Hypothesis {suspect_ref:'Service:payment'})-[e:EVIDENCED_BY]->"
              "(s:Service) RETURN e.tool, e.verdict, s.name ORDER BY e.tool")  # fmt: skip
    assert ["query_stack_graph", "supports", "payment"] in ev
    cause = rows(platform, "MATCH (:Incident {fingerprint:$f})-[r:ROOT_CAUSED_BY]->(s) "
                 "RETURN s.name, r.confidence, r.status", f="fp-a")  # fmt: skip
    assert cause[0][0] == "payment" and cause[0][1] >= 0.4 and cause[0][2] == "Active"


def test_resent_alert_joins_and_resolved_closes(client: TestClient, platform: GraphStore) -> None:
    client.post("/api/v1/alerts", json=firing("fp-b"), headers=AUTH)
    again = client.post("/api/v1/alerts", json=firing("fp-b"), headers=AUTH)
    assert again.json() == {"started": [], "joined": ["fp-b"], "closed": []}
    wait_done(client, "fp-b")
    done = client.post("/api/v1/alerts", json=firing("fp-b", "resolved"), headers=AUTH)
    assert done.json()["closed"] == ["fp-b"]
    listing = client.get("/api/v1/incidents", headers=AUTH).json()
    assert [(i["fingerprint"], i["status"], i["alerts_seen"]) for i in listing] == [
        ("fp-b", "resolved", 2)]  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status = rows(platform, "MATCH (i:Incident {fingerprint:'fp-b'}) RETURN i.incident_status")
        if status and status[0][0] == "resolved":
            break
        time.sleep(0.1)
    assert status[0][0] == "resolved"


def gated_plan(gate: threading.Event) -> Any:
    """A plan that waits for `gate`: the worker holds its job, so the backlog stays."""

    def plan(store: GraphStore, alert: Alert) -> Plan:
        gate.wait(30)
        return payment_plan(store, alert)

    return plan


def held_client(
    settings: Settings, platform: GraphStore, gate: threading.Event, queue_size: int
) -> TestClient:
    """One worker whose plans wait for `gate`, a small queue, no grouping."""
    tight = settings.model_copy(update={"api_queue_size": queue_size, "api_workers": 1,
                                        "api_correlation_window_s": 0})  # fmt: skip
    return make_client(tight, platform, plan_fn=gated_plan(gate))


def test_full_queue_answers_503_with_retry_after_and_stores_nothing(
    settings: Settings, platform: GraphStore
) -> None:
    gate = threading.Event()
    with held_client(settings, platform, gate, queue_size=1) as c:
        assert c.post("/api/v1/alerts", json=firing("q1"), headers=AUTH).status_code == 202
        full = c.post("/api/v1/alerts", json=firing("q2"), headers=AUTH)
        assert full.status_code == 503 and full.headers["retry-after"] == "10"
        assert c.get("/api/v1/incidents/q2", headers=AUTH).status_code == 404
        assert "stackgraph_alerts_rejected_total 1.0" in c.get("/metrics").text
        # a re-sent alert starts nothing, so a full queue still takes it
        again = c.post("/api/v1/alerts", json=firing("q1"), headers=AUTH)
        assert again.status_code == 202 and again.json()["joined"] == ["q1"]
        gate.set()
        wait_done(c, "q1")
        retried = c.post("/api/v1/alerts", json=firing("q2"), headers=AUTH)
        assert retried.status_code == 202 and retried.json()["started"] == ["q2"]
        assert wait_done(c, "q2")["alerts_seen"] == 1  # the refused call counted nothing
        assert wait_done(c, "q1")["alerts_seen"] == 2


def test_a_payload_larger_than_the_queue_is_taken_whole(
    settings: Settings, platform: GraphStore
) -> None:
    gate = threading.Event()
    with held_client(settings, platform, gate, queue_size=2) as c:
        body = firing("big-0")
        body["alerts"] = [{**body["alerts"][0], "fingerprint": f"big-{i}"} for i in range(5)]
        r = c.post("/api/v1/alerts", json=body, headers=AUTH)
        assert r.status_code == 202 and len(r.json()["started"]) == 5
        assert c.post("/api/v1/alerts", json=firing("after"), headers=AUTH).status_code == 503
        gate.set()
        for i in range(5):
            assert wait_done(c, f"big-{i}")["state"] == "done"
        assert c.post("/api/v1/alerts", json=firing("after"), headers=AUTH).status_code == 202
        assert wait_done(c, "after")["state"] == "done"


def test_bad_payloads_are_named_and_large_bodies_refused(client: TestClient) -> None:
    body = firing()
    body["alerts"][0]["fingerprint"] = "bad fingerprint!"
    r = client.post("/api/v1/alerts", json=body, headers=AUTH)
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["body", "alerts", 0, "fingerprint"]
    huge = {"x": "y" * 2_000_000}
    assert client.post("/api/v1/alerts", json=huge, headers=AUTH).status_code == 413


def test_feedback_updates_the_outcome(client: TestClient, platform: GraphStore) -> None:
    client.post("/api/v1/alerts", json=firing("fp-c"), headers=AUTH)
    wait_done(client, "fp-c")
    r = client.post("/api/v1/incidents/fp-c/feedback", headers=AUTH,
                    json={"verdict": "confirmed", "root_cause": "no-such-thing"})  # fmt: skip
    assert r.status_code == 404 and "no-such-thing" in r.json()["detail"]
    r = client.post("/api/v1/incidents/fp-c/feedback", headers=AUTH,
                    json={"verdict": "confirmed", "root_cause": "payments-db"})  # fmt: skip
    assert r.status_code == 200 and r.json()["feedback"] == "confirmed"
    assert r.json()["root_cause"] == "payments-db"
    edges = rows(platform, "MATCH (:Incident {fingerprint:'fp-c'})-[r:ROOT_CAUSED_BY]->(s) "
                 "RETURN labels(s)[0], s.name, r.status, r.outcome ORDER BY s.name")  # fmt: skip
    assert edges == [["Service", "payment", "Deprecated", "wrong"],
                     ["Datastore", "payments-db", "Active", "confirmed"]]  # fmt: skip
    assert client.post("/api/v1/incidents/nope/feedback", headers=AUTH,
                       json={"verdict": "wrong"}).status_code == 404  # fmt: skip


def test_shadow_mode_marks_outcomes(
    settings: Settings, platform: GraphStore, payment_repo: Path, payment_kube: FakeKube
) -> None:
    shadow = settings.model_copy(update={"shadow_mode": True})
    with make_client(shadow, platform, payment_repo, payment_kube) as c:
        c.post("/api/v1/alerts", json=firing("fp-s"), headers=AUTH)
        assert wait_done(c, "fp-s")["shadow"] is True
    got = rows(platform, "MATCH (i:Incident {fingerprint:'fp-s'})-[r:ROOT_CAUSED_BY]->() "
               "RETURN i.shadow, r.shadow, r.status")  # fmt: skip
    assert got == [[True, True, "Candidate"]]


def test_on_concluded_hooks_get_the_outcome(client: TestClient) -> None:
    seen: list[IncidentOutcome] = []
    client.app.state.service.on_concluded.append(seen.append)  # type: ignore[attr-defined]
    client.post("/api/v1/alerts", json=firing("fp-h"), headers=AUTH)
    wait_done(client, "fp-h")
    assert [o.fingerprint for o in seen] == ["fp-h"] and seen[0].root_cause == "payment"


def test_adhoc_investigation_and_graph_tool(client: TestClient) -> None:
    r = client.post("/api/v1/investigate", headers=AUTH,
                    json={"labels": {"service": "checkout", "alertname": "Manual"}})  # fmt: skip
    assert r.status_code == 202 and r.json()["plan"]["anchor"] == "checkout"
    detail = wait_done(client, r.json()["fingerprint"])
    assert detail["conclusion"] == "payment"
    g = client.post("/api/v1/tools/query_stack_graph", headers=AUTH,
                    json={"service": "checkout", "raw": True})  # fmt: skip
    sentences = g.json()["sentences"]
    assert any(s.startswith("checkout calls payment (error rate 12%, p95 840 ms, 5000 traces, "
                            "from Tempo, seen") for s in sentences)  # fmt: skip
    # the age depends on how long the investigation took; the sentence's shape does not
    assert any(re.fullmatch(r"frontend calls checkout \(from StaticInfra, seen \d+ s ago\)", s)
               for s in sentences)  # fmt: skip
    paths = client.post("/api/v1/tools/query_stack_graph", headers=AUTH,
                        json={"service": "frontend", "other": "payment"}).json()  # fmt: skip
    assert paths["paths"] == [["frontend", "checkout", "payment"]]


def test_metrics_count_alerts_and_investigations(client: TestClient) -> None:
    client.post("/api/v1/alerts", json=firing("fp-m"), headers=AUTH)
    audit = wait_done(client, "fp-m")["audit"]
    text = client.get("/metrics").text
    # git read the alert window; nothing on payment compared it to a baseline: half an EP
    assert audit["route"] == "pass" and audit["stages"]["EP"]["score"] == 0.5
    assert 'stackgraph_audits_total{route="pass"} 1.0' in text
    assert 'stackgraph_alerts_received_total{status="firing"} 1.0' in text
    assert 'stackgraph_investigations_total{ending="concluded"} 1.0' in text
    assert "stackgraph_investigation_duration_seconds_count 1.0" in text
    assert "stackgraph_queue_depth 0.0" in text


def test_no_token_configured_is_refused(settings: Settings) -> None:
    from stackgraph.errors import ConfigError

    with pytest.raises(ConfigError, match="STACKGRAPH_API_TOKEN"):
        create_app(settings)


def test_agent_is_injectable(settings: Settings, platform: GraphStore) -> None:
    with make_client(settings, platform, agent=Agent(tools={})) as c:
        c.post("/api/v1/alerts", json=firing("fp-i"), headers=AUTH)
        assert wait_done(c, "fp-i")["ending"] == "insufficient_evidence"
