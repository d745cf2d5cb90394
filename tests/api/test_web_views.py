"""The web UI's pure parts: the blame graph's view model and layout, the list filter, and
the session and CSRF tokens (no server, no browser)."""

from __future__ import annotations

from typing import Any

from stackgraph.api.schemas import HypothesisView, IncidentDetail
from stackgraph.web import blame_graph
from stackgraph.web import session as sessions
from stackgraph.web.health_view import source_rows
from stackgraph.web.pages import Filter, list_rows, plan_rows
from stackgraph.web.service_view import MAX_NODES, service_graph

PLAN = {"anchor": "checkout", "reason": "", "window": None, "candidates": [
    {"service": "payment", "score": 0.6, "signals": {"blame": 0.8, "change": 0.7},
     "paths": [["checkout", "payment", "stripe"]], "kind": "Service"},
    {"service": "stripe", "score": 0.15, "signals": {"blame": 0.1},
     "paths": [["checkout", "payment", "stripe"]], "kind": "ExternalApi"},
    {"service": "frontend", "score": 0.3, "signals": {"topology": 0.5}, "paths": [],
     "kind": "Service"},
]}  # fmt: skip


def detail(**over: Any) -> IncidentDetail:
    base: dict[str, Any] = dict(
        fingerprint="fp1", status="open", state="done", symptom="checkout",
        alertname="HighErrorRate", opened_at=1000.0, alerts_seen=1, shadow=False,
        feedback="pending", root_cause="payment", plan=PLAN,
        hypotheses=[HypothesisView(suspect="payment", suspect_ref="Service:payment",
                                   kind="Service", rank=1, state="Validated",
                                   confidence=0.7, evidence=[])],
    )  # fmt: skip
    return IncidentDetail(**{**base, **over})


ROWS = [{"src": "checkout", "type": "CALLS", "dst": "payment", "dst_label": "Service",
         "error_rate": 0.14, "p95_ms": 1540.0, "source": "Tempo", "status": "Active"},
        {"src": "payment", "type": "CALLS", "dst": "stripe", "dst_label": "ExternalApi",
         "error_rate": None, "p95_ms": None, "source": "StaticInfra", "status": "Stale"},
        ]  # fmt: skip


def test_blame_graph_nodes_edges_and_layers() -> None:
    g = blame_graph(detail(), ROWS)
    nodes = {n.name: n for n in g.nodes}
    assert set(nodes) == {"checkout", "payment", "stripe", "frontend"}
    assert nodes["checkout"].role == "symptom" and nodes["checkout"].state is None
    assert nodes["payment"].state == "Validated" and nodes["stripe"].state == "Candidate"
    assert nodes["stripe"].kind == "ExternalApi"
    # layers run left to right from the symptom; size follows the score
    assert nodes["checkout"].x < nodes["payment"].x < nodes["stripe"].x
    assert nodes["payment"].r > nodes["frontend"].r > nodes["stripe"].r
    edges = {(e.src, e.dst): e for e in g.edges}
    assert edges["checkout", "payment"].label == "err 14.0% · p95 1540 ms"
    assert edges["payment", "stripe"].status == "Stale" and edges["payment", "stripe"].label == ""
    assert all(0 <= n.x <= g.width and 0 <= n.y <= g.height for n in g.nodes)


def test_a_path_step_without_an_edge_is_drawn_as_the_plans() -> None:
    g = blame_graph(detail(), [])
    assert {(e.src, e.dst, e.source) for e in g.edges} == {
        ("checkout", "payment", "plan"), ("payment", "stripe", "plan")}  # fmt: skip


def test_no_plan_draws_nothing() -> None:
    g = blame_graph(detail(plan=None, hypotheses=[]), ROWS)
    assert g.nodes == [] and g.edges == []


def test_plan_rows_and_list_filter() -> None:
    rows = plan_rows(detail())
    assert [r.service for r in rows] == ["payment", "stripe", "frontend"]
    assert rows[0].signals[0] == ("blame", 0.8) and rows[0].state == "Validated"
    assert rows[0].top_path == ["checkout", "payment", "stripe"]
    ds = [detail(), detail(fingerprint="fp2", symptom="cart", status="resolved")]
    assert [r.fingerprint for r in list_rows(ds, Filter.of("CART", None, None), 2000.0)] == [
        "fp2"]  # fmt: skip
    assert [r.fingerprint for r in list_rows(ds, Filter.of("", "open", "bogus"), 2000.0)] == [
        "fp1"]  # fmt: skip
    (row,) = list_rows(ds[:1], Filter(), 2000.0)
    assert row.age_s == 1000.0 and row.confidence == 0.7


def test_session_tokens() -> None:
    cookie, issued = sessions.issue("tok", now=100.0)
    again = sessions.verify("tok", cookie, now=200.0)
    assert again == issued and sessions.csrf_ok(issued, issued.csrf)
    assert sessions.verify("other-token", cookie, now=200.0) is None  # rotated token
    assert sessions.verify("tok", cookie, now=100.0 + sessions.SESSION_TTL_S + 1) is None
    issued_at, nonce, mac = cookie.split(".")
    assert sessions.verify("tok", f"{int(issued_at) + 1}.{nonce}.{mac}", now=200.0) is None
    for bad in (None, "", "a.b", "x.y.z", "1.2.3.4"):
        assert sessions.verify("tok", bad) is None
    assert not sessions.csrf_ok(issued, None) and not sessions.csrf_ok(issued, "é")


def test_service_graph_layers_hops_and_keeps_labels_apart() -> None:
    rows = [
        {"from": "payment", "type": "CALLS", "outgoing": False, "label": "Service",
         "name": "checkout", "source": "Tempo", "status": "Active", "error_rate": 0.12,
         "p95_ms": 840.0, "hop": 1},
        {"from": "payment", "type": "DEPLOYED_AS", "outgoing": True, "label": "Deployment",
         "name": "payment", "source": "StaticInfra", "status": "Stale", "hop": 1},
        {"from": "checkout", "type": "CALLS", "outgoing": True, "label": "Service",
         "name": "cart", "source": "Tempo", "status": "Active", "hop": 2},
        {"from": "payment", "type": "EXPOSES", "outgoing": True, "label": "Endpoint",
         "name": None, "hop": 1},
    ]  # fmt: skip
    g = service_graph("payment", rows)
    nodes = {n.name: n for n in g.nodes}
    assert set(nodes) == {"payment", "checkout", "Deployment:payment", "cart"}
    assert nodes["Deployment:payment"].text == "payment" and nodes["payment"].role == "focus"
    assert nodes["payment"].x < nodes["checkout"].x < nodes["cart"].x
    edges = {(e.src, e.dst): e for e in g.edges}
    assert edges["checkout", "payment"].label == "err 12.0% · p95 840 ms"
    assert edges["payment", "Deployment:payment"].label == "DEPLOYED_AS"
    assert edges["payment", "Deployment:payment"].status == "Stale"


def test_service_graph_is_bounded() -> None:
    rows = [{"from": "hub", "type": "CALLS", "outgoing": True, "label": "Service",
             "name": f"s{i}", "hop": 1} for i in range(500)]  # fmt: skip
    g = service_graph("hub", rows)
    assert len(g.nodes) == MAX_NODES and len(g.edges) == MAX_NODES - 1


def test_source_rows_merge_nodes_and_edges_oldest_scan_first() -> None:
    rows = [
        {"kind": "node", "source": "Tempo", "n": 3, "last_scan": 900.0, "stale": 1},
        {"kind": "edge", "source": "Tempo", "n": 5, "last_scan": 950.0, "stale": 0},
        {"kind": "node", "source": "StaticInfra", "n": 7, "last_scan": 100.0, "stale": 0},
    ]
    infra, tempo = source_rows(rows, now=1000.0)
    assert (infra.source, infra.age_s) == ("StaticInfra", 900.0)
    assert (tempo.nodes, tempo.edges, tempo.stale, tempo.age_s) == (3, 5, 1, 50.0)
    assert "telemetry" in tempo.lanes
