"""Untrusted text is data, never query text: every write template stores it verbatim."""

from __future__ import annotations

import pytest

from stackgraph import cypher
from stackgraph.dump import stats
from stackgraph.ingest import GraphIngestor
from stackgraph.schema import EdgeRecord, NodeRecord, NodeRef, RecordBatch
from stackgraph.store import GraphStore

PAYLOADS = [
    "x'}) DETACH DELETE n //",
    '"\\u0000',
    '"}) MATCH (n) DETACH DELETE n //',
    "`) DETACH DELETE n RETURN 1 //",
    '\\"; CALL db.labels() //',
    "$rows",
    "line\nbreak\ttab ünï 漢字 🙂",
]


def _read_all(store: GraphStore) -> list[dict[str, object]]:
    q = cypher.render("export_nodes", label="Service")
    return [r["p"] for r in store.read(q, {"after": -1, "limit": 1000})]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_batched_templates_store_payload_verbatim(store: GraphStore, payload: str) -> None:
    anchor = NodeRecord("Service", {"name": "anchor"}, {"owner": "ok"})
    evil = NodeRecord("Service", {"name": payload}, {"owner": payload, "tags": [payload]})
    edge = EdgeRecord("CALLS", NodeRef("Service", {"name": payload}), anchor.ref, {"note": payload})
    with GraphIngestor(store) as w:
        # node_merge + edge_merge, then node_touch + edge_touch on the second pass
        for _ in range(2):
            report = w.write(RecordBatch([anchor, evil], [edge]))
            assert report.rejected == []
        # a changed payload goes through merge again (update path)
        w.write(RecordBatch([NodeRecord("Service", {"name": payload}, {"owner": payload + "!"})]))
    names = {p["name"]: p for p in _read_all(store)}
    assert set(names) == {"anchor", payload}
    assert names[payload]["owner"] == payload + "!" and names[payload]["tags"] == [payload]
    assert names["anchor"]["owner"] == "ok"
    assert stats(store) == {"nodes": {"Service": 2}, "edges": {"CALLS": 1}}
    from stackgraph.dump import export_records

    (e,) = [r for r in export_records(store) if r["kind"] == "edge"]
    assert e["props"]["note"] == payload and e["src"]["name"] == payload


@pytest.mark.parametrize("payload", PAYLOADS)
def test_single_record_templates_store_payload_verbatim(store: GraphStore, payload: str) -> None:
    with GraphIngestor(store) as w:
        w.apply_schema()
        w._write(
            cypher.render("node_merge_one", label="Service", tag="Synthetic"),
            {"k0": payload, "p": {"owner": payload}, "h": "x", "now": 1.0},
        )
        w._write(
            cypher.render("node_merge_one", label="Service", tag="Synthetic"),
            {"k0": "b", "p": {}, "h": "x", "now": 1.0},
        )
        w._write(
            cypher.render("edge_merge_one", edge=("CALLS", "Service", "Service"), tag="Synthetic"),
            {"s0": payload, "d0": "b", "p": {"note": payload}, "h": "x", "now": 1.0},
        )
    names = {p["name"]: p for p in _read_all(store)}
    assert names[payload]["owner"] == payload
    assert stats(store) == {"nodes": {"Service": 2}, "edges": {"CALLS": 1}}


def test_nul_character_is_refused_not_truncated(store: GraphStore) -> None:
    with GraphIngestor(store) as w:
        report = w.write(RecordBatch([NodeRecord("Service", {"name": "a\x00b"})]))
    assert "NUL" in str(report.rejected[0])
    assert stats(store)["nodes"] == {}
