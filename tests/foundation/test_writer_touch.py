"""The re-ingest path: unchanged edges of a type without its own key are touched grouped by
source node (`edge_touch_by_source`); what changed, lost a node or is keyed still goes
through pending + merge. Each case checks the graph, not how fast it got there."""

from __future__ import annotations

from typing import Any

from test_writer import Clock, ref

from stackgraph import cypher
from stackgraph.dump import stats
from stackgraph.ingest import GraphIngestor
from stackgraph.schema import EdgeRecord, NodeRecord, NodeRef, RecordBatch
from stackgraph.store import GraphStore


def mesh(overrides: dict[str, dict[str, Any]] | None = None, n: int = 6) -> RecordBatch:
    """Every service calls the next three; `overrides["a>b"]` replaces that edge's props."""
    overrides = overrides or {}
    nodes = [NodeRecord("Service", {"name": f"s{i}"}, {"tier": i}, "StaticInfra") for i in range(n)]
    edges = []
    for i in range(n):
        for step in (1, 2, 3):
            j = (i + step) % n
            props = overrides.get(f"s{i}>s{j}", {"error_rate": 0.01 * step, "trace_count": i})
            edges.append(EdgeRecord("CALLS", ref(f"s{i}"), ref(f"s{j}"), props, "Tempo"))
    return RecordBatch(nodes, edges)


ALL_CALLS = cypher.Query("MATCH (a)-[e:CALLS]->(b) RETURN a.name AS a, b.name AS b, e AS e")


def edges(store: GraphStore) -> dict[tuple[str, str], dict[str, Any]]:
    """Every CALLS edge's stored properties, clocks included (the export leaves them out)."""
    return {(r["a"], r["b"]): dict(r["e"].properties) for r in store.read(ALL_CALLS)}


def test_unchanged_edges_are_touched_clocks_advance_first_seen_stays(store: GraphStore) -> None:
    clock = Clock(100.0)
    with GraphIngestor(store, clock=clock) as w:
        w.write(mesh())
        before = edges(store)
        clock.t = 200.0
        again = w.write(mesh())
    assert again.edges["CALLS"].unchanged == 18 and again.edges["CALLS"].updated == 0
    after = edges(store)
    assert after.keys() == before.keys()
    for key, p in after.items():
        assert p["first_seen"] == 100.0 and p["last_seen"] == 200.0 and p["last_scan"] == 200.0
        rest = {k: v for k, v in p.items() if k not in ("last_seen", "last_scan")}
        assert rest == {k: v for k, v in before[key].items() if k not in ("last_seen", "last_scan")}


def test_a_changed_edge_among_unchanged_ones_is_rewritten(store: GraphStore) -> None:
    clock = Clock(100.0)
    with GraphIngestor(store, clock=clock) as w:
        w.write(mesh())
        clock.t = 200.0
        again = w.write(mesh({"s0>s2": {"error_rate": 0.5, "trace_count": 9}}))
    assert again.edges["CALLS"].updated == 1 and again.edges["CALLS"].unchanged == 17
    p = edges(store)[("s0", "s2")]
    assert p["error_rate"] == 0.5 and p["trace_count"] == 9
    assert p["first_seen"] == 100.0 and p["last_seen"] == 200.0


def test_two_edges_of_one_source_swapping_contents_are_both_rewritten(store: GraphStore) -> None:
    """A hash is unchanged only for its own target: s0->s1 taking s0->s2's properties (and
    the other way round) is two changes, though both hashes are still in s0's group."""
    one = {"error_rate": 0.01, "trace_count": 0}
    two = {"error_rate": 0.02, "trace_count": 0}
    clock = Clock(100.0)
    with GraphIngestor(store, clock=clock) as w:
        w.write(mesh({"s0>s1": one, "s0>s2": two}))
        clock.t = 200.0
        again = w.write(mesh({"s0>s1": two, "s0>s2": one}))
    assert again.edges["CALLS"].updated == 2 and again.edges["CALLS"].unchanged == 16
    got = edges(store)
    assert got[("s0", "s1")]["error_rate"] == 0.02 and got[("s0", "s2")]["error_rate"] == 0.01


def test_a_provenance_change_in_a_group_is_rewritten(store: GraphStore) -> None:
    batch = mesh()
    clock = Clock(100.0)
    with GraphIngestor(store, clock=clock) as w:
        w.write(batch)
        clock.t = 200.0
        e = batch.edges[0]
        doubted = EdgeRecord(e.type, e.src, e.dst, e.props, e.source, "Candidate", 0.5)
        again = w.write(RecordBatch(batch.nodes, [doubted, *batch.edges[1:]]))
    assert again.edges["CALLS"].updated == 1 and again.edges["CALLS"].unchanged == 17
    p = edges(store)[(e.src.key["name"], e.dst.key["name"])]
    assert p["status"] == "Candidate" and p["confidence"] == 0.5


def test_a_node_deleted_between_runs_is_written_again_with_its_edges(store: GraphStore) -> None:
    clock = Clock(100.0)
    with GraphIngestor(store, clock=clock) as w:
        w.write(mesh())
        w._write(cypher.Query("MATCH (n:Service {name: 's3'}) DETACH DELETE n"))
        assert stats(store) == {"nodes": {"Service": 5}, "edges": {"CALLS": 12}}
        clock.t = 200.0
        again = w.write(mesh())
    assert again.nodes["Service"].created == 1 and again.nodes["Service"].unchanged == 5
    assert again.edges["CALLS"].created == 6 and again.edges["CALLS"].unchanged == 12
    assert stats(store) == {"nodes": {"Service": 6}, "edges": {"CALLS": 18}}
    got = edges(store)
    assert got[("s3", "s4")]["first_seen"] == 200.0 and got[("s2", "s3")]["first_seen"] == 200.0
    assert got[("s0", "s1")]["first_seen"] == 100.0 and got[("s0", "s1")]["last_seen"] == 200.0


def test_a_source_with_more_edges_than_a_group_holds_is_touched_row_by_row(
    store: GraphStore,
) -> None:
    hub = [NodeRecord("Service", {"name": f"t{i}"}, {}, "StaticInfra") for i in range(100)]
    fan = [EdgeRecord("CALLS", ref("s0"), ref(f"t{i}"), {"trace_count": i}, "Tempo")
           for i in range(100)]  # fmt: skip
    base = mesh()
    batch = RecordBatch([*base.nodes, *hub], [*base.edges, *fan])
    clock = Clock(100.0)
    with GraphIngestor(store, clock=clock) as w:
        w.write(batch)
        clock.t = 200.0
        again = w.write(batch)
    assert again.edges["CALLS"].unchanged == 118 and again.edges["CALLS"].updated == 0
    assert all(p["last_seen"] == 200.0 for p in edges(store).values())


def test_keyed_edges_keep_the_row_by_row_touch(store: GraphStore) -> None:
    """EVIDENCED_BY has a key of its own (tool, check): several edges per pair of nodes."""
    nodes = [NodeRecord("Hypothesis", {"incident_fingerprint": "f", "suspect_ref": "s"},
                        {"state": "Candidate"}),
             NodeRecord("Service", {"name": "s"})]  # fmt: skip
    hyp = NodeRef("Hypothesis", {"incident_fingerprint": "f", "suspect_ref": "s"})
    evidence = [
        EdgeRecord("EVIDENCED_BY", hyp, ref("s"),
                   {"tool": "prom", "check": c, "verdict": "supports", "result_summary": c})
        for c in ("latency", "errors")
    ]  # fmt: skip
    clock = Clock(100.0)
    with GraphIngestor(store, clock=clock) as w:
        w.write(RecordBatch(nodes, evidence))
        clock.t = 200.0
        again = w.write(RecordBatch(nodes, evidence))
    assert not again.rejected, again.rejected
    assert again.edges["EVIDENCED_BY"].unchanged == 2
    assert stats(store)["edges"] == {"EVIDENCED_BY": 2}


def test_edges_find_the_nodes_written_with_them_without_looking_them_up(
    store: GraphStore, monkeypatch: Any
) -> None:
    """Node writes (create, touch, merge) return their nodes' ids; only endpoints this
    write did not write are looked up (`node_ids`)."""
    lookup = cypher.render("node_ids", label="Service", key_at=1)
    read, lookups = store.read, []

    def counting(query: cypher.Query, params: Any = None) -> Any:
        lookups.append(query == lookup)
        return read(query, params)

    monkeypatch.setattr(store, "read", counting)
    clock = Clock(100.0)
    with GraphIngestor(store, clock=clock) as w:
        first = w.write(mesh())
        clock.t = 200.0
        again = w.write(mesh(n=7))  # s0..s5 touched, s6 created, with the edges it makes new
        assert not any(lookups)
        clock.t = 300.0
        alone = w.write(RecordBatch([], mesh(n=7).edges))
    assert first.edges["CALLS"].created == 18 and not first.rejected
    assert again.nodes["Service"].unchanged == 6 and again.nodes["Service"].created == 1
    pairs = [{(e.src.key["name"], e.dst.key["name"]) for e in mesh(n=n).edges} for n in (6, 7)]
    assert again.edges["CALLS"].created == len(pairs[1] - pairs[0]) > 0 and not again.rejected
    assert any(lookups) and alone.edges["CALLS"].unchanged == 21 and not alone.rejected
