"""The single writer against a real FalkorDB: counts, provenance, partial batches, leases."""

from __future__ import annotations

import pytest
from sgtest import drop

from stackgraph.dump import export_lines, stats
from stackgraph.errors import LeaseHeldError
from stackgraph.ingest import GraphIngestor
from stackgraph.schema import EdgeRecord, NodeRecord, NodeRef, RecordBatch
from stackgraph.store import GraphStore


class Clock:
    def __init__(self, t: float = 1_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def ref(name: str) -> NodeRef:
    return NodeRef("Service", {"name": name})


def platform(n: int = 5, crit: str = "high") -> RecordBatch:
    nodes = [
        NodeRecord("Service", {"name": f"s{i}"}, {"criticality": crit}, "StaticInfra")
        for i in range(n)
    ]
    edges = [
        EdgeRecord("CALLS", ref(f"s{i}"), ref(f"s{i + 1}"), {"error_rate": 0.1 * i}, "Tempo")
        for i in range(n - 1)
    ]
    return RecordBatch(nodes, edges)


def props_of(store: GraphStore, name: str) -> dict[str, object]:
    from stackgraph import cypher

    rows = store.read(cypher.render("export_nodes", label="Service"), {"after": -1, "limit": 100})
    return next(r["p"] for r in rows if r["p"]["name"] == name)


def test_counts_created_updated_unchanged(store: GraphStore) -> None:
    clock = Clock()
    with GraphIngestor(store, batch_size=2, clock=clock) as w:
        first = w.write(platform())
        assert first.nodes["Service"].created == 5 and first.edges["CALLS"].created == 4
        clock.t += 10
        again = w.write(platform())
        assert again.nodes["Service"].unchanged == 5 and again.edges["CALLS"].unchanged == 4
        assert again.nodes["Service"].created == again.nodes["Service"].updated == 0
        clock.t += 10
        changed = w.write(platform(crit="critical"))
        assert changed.nodes["Service"].updated == 5 and changed.nodes["Service"].created == 0
    assert stats(store) == {"nodes": {"Service": 5}, "edges": {"CALLS": 4}}


def test_provenance_first_seen_kept_last_seen_advanced(store: GraphStore) -> None:
    clock = Clock(100.0)
    with GraphIngestor(store, clock=clock) as w:
        w.write(platform(2))
        clock.t = 200.0
        w.write(platform(2))
    p = props_of(store, "s0")
    assert p["first_seen"] == 100.0 and p["last_seen"] == 200.0 and p["last_scan"] == 200.0
    assert p["source"] == "StaticInfra" and p["status"] == "Active" and p["confidence"] == 1.0


def test_invalid_records_rejected_valid_ones_written(store: GraphStore) -> None:
    batch = platform(3)
    batch.nodes.append(NodeRecord("Service", {"name": "bad"}, {"criticality": "urgent"}))
    batch.nodes.append(NodeRecord("Nope", {"name": "x"}))
    batch.edges.append(EdgeRecord("CALLS", ref("s0"), ref("ghost")))
    with GraphIngestor(store) as w:
        report = w.write(batch)
    text = [str(r) for r in report.rejected]
    assert len(text) == 3, text
    assert any("Service{name='bad'}" in t and "criticality" in t for t in text)
    assert any("unknown label 'Nope'" in t for t in text)
    assert any("ghost" in t and "does not exist" in t for t in text)
    assert stats(store) == {"nodes": {"Service": 3}, "edges": {"CALLS": 2}}


def test_duplicate_records_merge_in_order(store: GraphStore) -> None:
    batch = RecordBatch(
        [
            NodeRecord("Service", {"name": "a"}, {"owner": "x", "tier": 1}),
            NodeRecord("Service", {"name": "a"}, {"owner": "y"}),
        ]
    )
    with GraphIngestor(store) as w:
        report = w.write(batch)
    assert report.nodes["Service"].created == 1
    p = props_of(store, "a")
    assert p["owner"] == "y" and p["tier"] == 1


def test_export_is_identical_after_reingest(store: GraphStore) -> None:
    clock = Clock()
    with GraphIngestor(store, clock=clock) as w:
        w.write(platform())
        before = export_lines(store)
        clock.t += 3600
        w.write(platform())
    assert export_lines(store) == before
    assert all("last_seen" not in line for line in before)


def test_parallel_edges_by_edge_key(store: GraphStore) -> None:
    hyp = NodeRef("Hypothesis", {"incident_fingerprint": "f1", "suspect_ref": "Service:a"})
    nodes = [
        NodeRecord("Service", {"name": "a"}),
        NodeRecord("Hypothesis", dict(hyp.key), {"state": "Candidate"}),
    ]
    ev = {"verdict": "supports", "result_summary": "p95 up 4x"}
    edges = [
        EdgeRecord("EVIDENCED_BY", hyp, ref("a"), {"tool": "prometheus", "check": "latency", **ev}),
        EdgeRecord("EVIDENCED_BY", hyp, ref("a"), {"tool": "prometheus", "check": "errors", **ev}),
    ]
    with GraphIngestor(store) as w:
        report = w.write(RecordBatch(nodes, edges))
    assert report.edges["EVIDENCED_BY"].created == 2


def test_second_writer_is_refused_naming_the_holder(store: GraphStore) -> None:
    with GraphIngestor(store, who="first") as w:
        w.write(platform(2))
        with pytest.raises(LeaseHeldError, match=r"first@.*expires in"):
            GraphIngestor(store, who="second").__enter__()
    with GraphIngestor(store, who="third") as w:
        w.write(platform(2))


def test_lease_expires_when_a_writer_dies(store: GraphStore) -> None:
    dead = GraphIngestor(store, lease_ttl_s=1.5, who="dead")
    dead.lease.conn.set(dead.lease.key, "dead@host:1:x", px=300)
    with pytest.raises(LeaseHeldError):
        GraphIngestor(store).__enter__()
    import time

    time.sleep(0.4)
    with GraphIngestor(store) as w:
        w.write(platform(1))


def test_apply_schema_is_idempotent(store: GraphStore) -> None:
    with GraphIngestor(store) as w:
        created = w.apply_schema()
        assert "range Service.name" in created and "fulltext MemoryEpisode.text" in created
        assert "range Service.namespace" in created  # the unlinked generator selects on it
        assert w.apply_schema() == []
        have = w.existing_indexes()
    assert ("Endpoint", "route", "RANGE") in have


def test_graph_keys_are_independent(store: GraphStore, settings: object) -> None:
    from dataclasses import replace  # noqa: F401

    other = GraphStore(store.conn, store.graph_name + "_other", store.where)
    with GraphIngestor(other) as w:
        w.write(platform(2))
    with GraphIngestor(store) as w:
        w.write(platform(4))
    drop(store)
    assert stats(other) == {"nodes": {"Service": 2}, "edges": {"CALLS": 1}}
    drop(other)


def test_mark_stale_flips_unseen_and_a_resighting_revives(store: GraphStore) -> None:
    clock = Clock(100.0)
    with GraphIngestor(store, clock=clock) as w:
        w.write(platform(3))
        clock.t = 200.0
        w.write(RecordBatch(platform(3).nodes, platform(3).edges[:1]))
        assert w.mark_stale(source="Tempo", cutoff=150.0, edge_type="CALLS") == 1
        assert w.mark_stale(source="Tempo", cutoff=150.0, edge_type="CALLS") == 0
        edges = {r["src"]["name"]: r["props"]["status"] for r in _edges(store)}
        assert edges == {"s0": "Active", "s1": "Stale"}
        clock.t = 300.0
        report = w.write(platform(3))
        assert report.edges["CALLS"].updated == 1
    assert {r["props"]["status"] for r in _edges(store)} == {"Active"}


def _edges(store: GraphStore) -> list[dict[str, object]]:
    from stackgraph.dump import export_records

    return [r for r in export_records(store) if r["kind"] == "edge"]


def test_lanes_sharing_nodes_and_edges_rerun_to_the_same_graph(store: GraphStore) -> None:
    """Catalog, infra and telemetry all assert the services, catalog and telemetry the CALLS
    edge. A rerun of the same lanes in the same order leaves the same graph; the catalog's
    property-less `calls:` edge only asserts existence, so Tempo's statistics and provenance
    stay and the edge counts as unchanged for both lanes."""
    catalog = RecordBatch(
        [NodeRecord("Service", {"name": n}, {"owner": "web"}, "StaticInfra") for n in "ab"],
        [EdgeRecord("CALLS", ref("a"), ref("b"), {}, "StaticInfra")],
    )
    infra = RecordBatch(
        [NodeRecord("Service", {"name": n}, {"namespace": "shop"}, "StaticInfra") for n in "ab"]
    )
    tempo = RecordBatch(
        [NodeRecord("Service", {"name": "a"}, {"entrypoint": True}, "Tempo"),
         NodeRecord("Service", {"name": "b"}, {}, "Tempo")],
        [EdgeRecord("CALLS", ref("a"), ref("b"), {"error_rate": 0.2}, "Tempo")],
    )  # fmt: skip
    clock = Clock()
    with GraphIngestor(store, clock=clock) as w:
        first = [w.write(catalog, tag="catalog"), w.write(infra, tag="infra"), w.write(tempo)]
        export = export_lines(store)
        clock.t += 60
        second = [w.write(catalog, tag="catalog"), w.write(infra, tag="infra"), w.write(tempo)]
    assert export_lines(store) == export
    assert first[0].nodes["Service"].created == 2 and first[0].edges["CALLS"].created == 1
    assert first[2].edges["CALLS"].updated == 1
    # a's provenance flips between StaticInfra (catalog, infra) and Tempo on every run: it is
    # rewritten, deterministically; b is only named by Tempo (no properties): a reference
    assert second[1].nodes["Service"].unchanged == 2
    assert second[2].nodes["Service"].updated == 1 and second[2].nodes["Service"].unchanged == 1
    assert second[0].edges["CALLS"].unchanged == second[2].edges["CALLS"].unchanged == 1
    a, b = props_of(store, "a"), props_of(store, "b")
    assert a["sources"] == ["StaticInfra", "Tempo"] and a["owner"] == "web"
    assert a["entrypoint"] is True and a["namespace"] == "shop" and a["source"] == "Tempo"
    assert b["source"] == "StaticInfra" and b["sources"] == ["StaticInfra", "Tempo"]
    assert {"hash_Tempo", "hash_catalog", "hash_infra"} <= set(a)
    (edge,) = _edges(store)
    assert edge["props"]["source"] == "Tempo" and edge["props"]["error_rate"] == 0.2
    assert edge["props"]["sources"] == ["StaticInfra", "Tempo"]
    assert not any(k.startswith("hash_") for k in edge["props"])
