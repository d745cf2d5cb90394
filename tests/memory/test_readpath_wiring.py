"""The read path over past incidents and past graphs: the history prior counts only
Active ROOT_CAUSED_BY edges, and `as_of` answers on the graph as it was then."""

from __future__ import annotations

from stackgraph.eval.records import DeployEvent, deploy_records
from stackgraph.ingest import GraphIngestor
from stackgraph.rca import investigate
from stackgraph.rca.change_history import changes, history
from stackgraph.rca.facts import Facts, NodeFact, Request
from stackgraph.rca.model import Alert
from stackgraph.rca.neighbourhood import callers, khop
from stackgraph.rca.windows import Windows
from stackgraph.schema import EdgeRecord, NodeRecord, NodeRef, RecordBatch
from stackgraph.store import GraphStore


class Clock:
    """The writer's clock, set by the test: first_seen / stale_at / revived_at are exact."""

    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def svc(name: str) -> NodeRef:
    return NodeRef("Service", {"name": name})


def request(as_of: float | None) -> Request:
    alert = Alert({"service": "checkout"})
    return Request(alert, Windows((0.0, 1.0), (-1.0, 0.0)), 2, 10, as_of=as_of)


def test_history_reads_only_active_root_causes(store: GraphStore) -> None:
    batch = RecordBatch(nodes=[NodeRecord("Service", {"name": n}) for n in
                               ("checkout", "payment", "inventory")])  # fmt: skip
    for fp, cause, status in (("i-ok", "payment", "Active"), ("i-wrong", "payment", "Deprecated"),
                              ("i-shadow", "inventory", "Candidate"),
                              ("i-ok2", "payment", "Active")):  # fmt: skip
        inc = NodeRef("Incident", {"fingerprint": fp})
        batch.nodes.append(NodeRecord("Incident", inc.key, {"service": "checkout"}))
        batch.edges.append(EdgeRecord("AFFECTS", inc, svc("checkout")))
        batch.edges.append(EdgeRecord("ROOT_CAUSED_BY", inc, svc(cause), {}, "Synthetic",
                                      status, 1.0 if status == "Active" else 0.0))  # fmt: skip
    with GraphIngestor(store, who="test") as w:
        assert not w.write(batch).rejected
    facts = Facts("checkout", {n: NodeFact(n) for n in ("checkout", "payment", "inventory")})
    got = history(store, request(None), facts).history
    assert set(got) == {"payment"}
    assert got["payment"].incidents == 2 and got["payment"].on_anchor >= 1
    assert history(store, request(0.0), facts).history == {}  # nothing was known at t=0


def test_as_of_hides_later_edges_and_gives_statuses_then(store: GraphStore) -> None:
    """checkout→payment seen at 100, Stale at 200, back at 400; checkout→inventory first
    seen at 300; frontend→checkout seen at 100."""
    clock = Clock(100.0)
    calls = {"trace_count": 10, "error_rate": 0.2}
    nodes = [NodeRecord("Service", {"name": n}, source="Tempo") for n in
             ("checkout", "payment", "inventory", "frontend")]  # fmt: skip
    pay = EdgeRecord("CALLS", svc("checkout"), svc("payment"), calls, "Tempo")
    inv = EdgeRecord("CALLS", svc("checkout"), svc("inventory"), calls, "Tempo")
    front = EdgeRecord("CALLS", svc("frontend"), svc("checkout"), calls, "Tempo")
    with GraphIngestor(store, clock=clock, who="test") as w:
        w.write(RecordBatch(nodes=nodes[:2] + nodes[3:], edges=[pay, front]))
        clock.t = 200.0
        assert w.mark_stale(source="Tempo", cutoff=150.0, edge_type="CALLS") == 2
        clock.t = 300.0
        w.write(RecordBatch(nodes=nodes[2:3], edges=[inv]))
        clock.t = 400.0
        w.write(RecordBatch(edges=[pay]))

    def edges(as_of: float | None) -> dict[tuple[str, str], str | None]:
        facts = Facts("checkout", {"checkout": NodeFact("checkout")})
        facts = callers(store, request(as_of), khop(store, request(as_of), facts))
        return {(e.src, e.dst): e.status for e in facts.edges}

    assert edges(None) == {("checkout", "payment"): "Active",
                           ("checkout", "inventory"): "Active",
                           ("frontend", "checkout"): "Stale"}  # fmt: skip
    assert edges(150.0) == {("checkout", "payment"): "Active", ("frontend", "checkout"): "Active"}
    assert edges(250.0) == {("checkout", "payment"): "Stale", ("frontend", "checkout"): "Stale"}
    assert edges(350.0) == {("checkout", "payment"): "Stale",
                            ("checkout", "inventory"): "Active",
                            ("frontend", "checkout"): "Stale"}  # fmt: skip
    alert = Alert({"service": "checkout"})
    assert investigate(store, alert, as_of=50.0).anchor is None  # before anything was seen
    assert investigate(store, alert, at=50.0).anchor == "checkout"  # `at` alone: windows only
    then = investigate(store, alert, as_of=250.0, at=250.0)
    assert {c.service for c in then.candidates} == {"checkout", "payment", "frontend"}


def _graph_reads(store: GraphStore) -> int:
    stats = store.conn.info("commandstats")
    return sum(int(v["calls"]) for k, v in stats.items() if k.startswith("cmdstat_graph."))


def test_as_of_hides_later_deploys_in_the_same_three_reads(store: GraphStore) -> None:
    """A rollout written at 300 is unknown at 250 and known at 350; time travel keeps the
    combined read path's three commands (anchor, neighbourhood, what happened)."""
    clock = Clock(100.0)
    pay = EdgeRecord("CALLS", svc("checkout"), svc("payment"), {"trace_count": 10}, "Tempo")
    with GraphIngestor(store, clock=clock, who="test") as w:
        w.write(RecordBatch(nodes=[NodeRecord("Service", {"name": n}, source="Tempo")
                                   for n in ("checkout", "payment")], edges=[pay]))  # fmt: skip
        clock.t = 300.0
        assert not w.write(deploy_records([DeployEvent("payment", "v2", 290.0)])).rejected
    facts = Facts("checkout", {n: NodeFact(n) for n in ("checkout", "payment")})
    assert changes(store, request(250.0), facts).changes == ()
    assert [c.service for c in changes(store, request(350.0), facts).changes] == ["payment"]
    alert = Alert({"service": "checkout"})
    before = _graph_reads(store)
    then = investigate(store, alert, as_of=250.0, at=250.0)
    assert _graph_reads(store) - before == 3
    assert {c.service for c in then.candidates} == {"checkout", "payment"}
