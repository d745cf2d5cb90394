"""The incident memory wired into the API and the agent: episodes on conclusion, a
correction on feedback, `GET /api/v1/memory/search` on both time axes, the agent's
`memory_lookup` tool and the report's similar incidents. Real FalkorDB, real MiniLM."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from kube_apiserver import FakeKube

from stackgraph.config import Settings
from stackgraph.ingest import GraphIngestor
from stackgraph.memory import (
    FalkorVectors,
    IncidentOutcome,
    Memory,
    current_version,
    offline_embedder,
    open_memory,
    record_episode,
    supersede,
    versions,
)
from stackgraph.rca.agent import Agent, ToolContext, ToolStatus, Verdict, call_tool, default_tools
from stackgraph.rca.model import Alert
from stackgraph.store import GraphStore

from .conftest import firing, payment_plan
from .test_api import AUTH, make_client, rows, wait_done

QUESTION = "HighErrorRate checkout 5xx error rate"


@pytest.fixture
def client(
    settings: Settings, platform: GraphStore, payment_repo: Path, payment_kube: FakeKube
) -> Iterator[TestClient]:
    with make_client(settings, platform, payment_repo, payment_kube) as c:  # memory: settings
        yield c


def search(client: TestClient, **params: Any) -> list[dict[str, Any]]:
    r = client.get("/api/v1/memory/search", params={"q": QUESTION, **params}, headers=AUTH)
    assert r.status_code == 200, r.text
    return list(r.json())


def test_concluded_incident_is_recorded_and_searchable(
    client: TestClient, platform: GraphStore
) -> None:
    assert client.post("/api/v1/alerts", json=firing("fp-mem-1"), headers=AUTH).status_code == 202
    detail = wait_done(client, "fp-mem-1")
    assert detail["root_cause"] == "payment"
    assert detail["writeback"]["memory"] == {"recorded": True, "version": 1, "written": True}
    cur = current_version(platform, "fp-mem-1")
    assert cur is not None and cur.fields["root_cause"] == "payment"
    assert cur.fields["service"] == "checkout" and "service:payment" in cur.fields["entities"]
    hits = search(client, service="checkout")
    assert hits[0]["incident"] == "fp-mem-1" and hits[0]["root_cause"] == "payment"
    assert hits[0]["score"] > 0 and hits[0]["why"]
    # auth like the rest; bad times are named
    assert client.get("/api/v1/memory/search", params={"q": "x"}).status_code == 401
    bad = client.get("/api/v1/memory/search", params={"q": "x", "as_of": "soon"}, headers=AUTH)
    assert bad.status_code == 422 and "as_of" in bad.text


def test_feedback_supersedes_and_known_at_returns_the_older_version(
    client: TestClient, platform: GraphStore
) -> None:
    client.post("/api/v1/alerts", json=firing("fp-mem-2"), headers=AUTH)
    wait_done(client, "fp-mem-2")
    first = current_version(platform, "fp-mem-2")
    assert first is not None and first.version == 1
    r = client.post("/api/v1/incidents/fp-mem-2/feedback", json={"verdict": "wrong"},
                    headers=AUTH)  # fmt: skip
    assert r.status_code == 200 and r.json()["writeback"]["memory"]["version"] == 2
    history = versions(platform, "fp-mem-2")
    assert [v.version for v in history] == [1, 2]
    assert history[0].expired_at is not None and history[1].expired_at is None
    assert history[1].fields["root_cause"] == "" and history[1].fields["supersedes"]
    now = search(client, service="checkout")
    assert (now[0]["version"], now[0]["root_cause"]) == (2, "")
    between = (first.ingested_at + history[1].ingested_at) / 2  # v1 held, v2 not yet
    then = search(client, service="checkout", known_at=str(between))
    assert (then[0]["version"], then[0]["root_cause"]) == (1, "payment")
    # the graph's ROOT_CAUSED_BY is Deprecated, and the alert resolving does not revive it
    client.post("/api/v1/alerts", json=firing("fp-mem-2", "resolved"), headers=AUTH)
    deadline = time.monotonic() + 30
    q = "MATCH (i:Incident {fingerprint:$f}) RETURN i.incident_status"
    while rows(platform, q, f="fp-mem-2") != [["resolved"]] and time.monotonic() < deadline:
        time.sleep(0.1)
    edge = rows(platform, "MATCH (:Incident {fingerprint:$f})-[r:ROOT_CAUSED_BY]->(x) "
                "RETURN x.name, r.status", f="fp-mem-2")  # fmt: skip
    assert edge == [["payment", "Deprecated"]]


def test_as_of_returns_the_version_true_then(client: TestClient, platform: GraphStore) -> None:
    memory: Memory = client.app.state.memory  # type: ignore[attr-defined]
    base = IncidentOutcome("fp-orders", "orders", "orders-db connections exhausted", 1000.0,
                           alert="HighErrorRate", root_cause="orders-db",
                           resolution="raise the pool size")  # fmt: skip
    changed = IncidentOutcome("fp-orders", "orders", "orders-db connections exhausted", 1000.0,
                              alert="HighErrorRate", root_cause="orders-db",
                              resolution="add pgbouncer")  # fmt: skip
    with GraphIngestor(platform, who="test") as w:
        record_episode(w, base, memory)
        supersede(w, changed, memory, kind="change", effective_at=5000.0)
    params = {"q": "orders-db connections exhausted", "service": "orders"}
    before = client.get("/api/v1/memory/search", params={**params, "as_of": "2000"},
                        headers=AUTH).json()  # fmt: skip
    after = client.get("/api/v1/memory/search", params={**params, "as_of": "6000"},
                       headers=AUTH).json()  # fmt: skip
    assert before[0]["incident"] == after[0]["incident"] == "fp-orders"
    assert before[0]["resolution"] == "raise the pool size" and before[0]["t_invalid"] == 5000
    assert after[0]["resolution"] == "add pgbouncer" and after[0]["t_valid"] == 5000


def test_a_memory_failure_never_fails_the_investigation(
    settings: Settings, platform: GraphStore, payment_repo: Path, payment_kube: FakeKube
) -> None:
    """A memory whose vector store was built for 7-d vectors refuses MiniLM's 384-d ones:
    the investigation and the write-back still finish; the failure is logged and counted."""

    def broken(store: GraphStore) -> Memory:
        return Memory(store, offline_embedder(), FalkorVectors(store, 7, "seven-d"))

    with make_client(settings, platform, payment_repo, payment_kube, memory_fn=broken) as c:
        assert c.post("/api/v1/alerts", json=firing("fp-mem-3"), headers=AUTH).status_code == 202
        detail = wait_done(c, "fp-mem-3")
        assert detail["state"] == "done" and detail["root_cause"] == "payment"
        assert detail["writeback"]["written"] is True
        assert detail["writeback"]["memory"]["recorded"] is False
        assert "7" in detail["writeback"]["memory"]["error"]
        metrics = c.get("/metrics").text
        assert 'stackgraph_memory_failures_total{op="record"} 1.0' in metrics
    stored = rows(platform, "MATCH (i:Incident {fingerprint:'fp-mem-3'})-[:ROOT_CAUSED_BY]->(r) "
                  "RETURN r.name")  # fmt: skip
    assert stored == [["payment"]]


def test_without_memory_search_answers_503(
    settings: Settings, platform: GraphStore, payment_repo: Path
) -> None:
    with make_client(settings, platform, payment_repo, memory_fn=lambda s: None) as c:
        r = c.get("/api/v1/memory/search", params={"q": "x"}, headers=AUTH)
        assert r.status_code == 503 and "memory not available" in r.text


def test_memory_lookup_tool_and_the_report_cite_past_incidents(platform: GraphStore) -> None:
    memory = open_memory(platform, offline_embedder())
    past = IncidentOutcome("fp-past", "checkout", "checkout 5xx rate above 5%", 100.0,
                           alert="HighErrorRate", root_cause="payment",
                           resolution="roll back payment")  # fmt: skip
    with GraphIngestor(platform, who="test") as w:
        record_episode(w, past, memory)
    alert = Alert({"alertname": "HighErrorRate", "service": "checkout"},
                  {"summary": "checkout 5xx rate above 5%"}, time.time(), "fp-now")  # fmt: skip
    plan = payment_plan(platform, alert)
    tool = default_tools()["memory_lookup"]
    off = call_tool(tool, ToolContext(store=platform, alert=alert, plan=plan), {"query": "x"})
    assert off.status == ToolStatus.UNAVAILABLE and off.summary == "memory not available"
    ctx = ToolContext(store=platform, alert=alert, plan=plan, memory=memory)
    found = call_tool(tool, ctx, {"query": "checkout 5xx errors", "service": "payment"})
    assert found.status == ToolStatus.SUCCESS and "fp-past" in found.summary
    assert tool.check(found, "payment", 0.0, 1.0) == Verdict.SUPPORTS
    assert tool.check(found, "inventory", 0.0, 1.0) == Verdict.INCONCLUSIVE
    run = Agent().investigate(alert, plan, ctx)
    assert [h["incident"] for h in run.report.similar] == ["fp-past"]
    assert "## Similar past incidents" in run.report.text()
    assert "root cause: payment; resolution: roll back payment" in run.report.text()
    alone = Agent().investigate(alert, plan, ToolContext(store=platform, alert=alert, plan=plan))
    assert alone.report.similar == [] and "Similar past" not in alone.report.text()


def test_the_floor_asks_memory_about_the_top_suspect(platform: GraphStore) -> None:
    """No model: a past incident root-caused by the top suspect is tool evidence for it
    (a line of its own: with the graph's check, which re-reads the plan's facts and is no
    line towards Validated, Supported); the incident's own earlier episode is not."""
    memory = open_memory(platform, offline_embedder())
    alert = Alert({"alertname": "HighErrorRate", "service": "checkout"},
                  {"summary": "checkout 5xx rate above 5%"}, time.time(), "fp-now")  # fmt: skip
    plan = payment_plan(platform, alert)
    ctx = ToolContext(store=platform, alert=alert, plan=plan, memory=memory)

    def memory_verdicts() -> dict[str, list[str]]:
        run = Agent().investigate(alert, plan, ctx)
        return {h.suspect: [str(e.verdict) for e in h.evidence if e.tool == "memory_lookup"]
                for h in run.hypotheses}  # fmt: skip

    itself = IncidentOutcome("fp-now", "checkout", "checkout 5xx rate above 5%", 50.0,
                             alert="HighErrorRate", root_cause="payment")  # fmt: skip
    with GraphIngestor(platform, who="test") as w:
        record_episode(w, itself, memory)
    assert memory_verdicts() == {"payment": ["inconclusive"], "inventory": []}
    past = IncidentOutcome("fp-past", "checkout", "checkout 5xx rate above 5%", 100.0,
                           alert="HighErrorRate", root_cause="payment",
                           resolution="roll back payment")  # fmt: skip
    with GraphIngestor(platform, who="test") as w:
        record_episode(w, past, memory)
    assert memory_verdicts() == {"payment": ["supports"], "inventory": []}
    run = Agent().investigate(alert, plan, ctx)
    payment = run.sink.hypotheses["payment"]
    assert {e.tool for e in payment.evidence} == {"query_stack_graph", "memory_lookup"}
    assert str(payment.state) == "Supported" and run.conclusion == "payment"
    without = Agent().investigate(alert, plan, ToolContext(store=platform, alert=alert, plan=plan))
    assert not any(e.tool == "memory_lookup" for e in without.sink.all_evidence)
