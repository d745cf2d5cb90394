"""The batched writer's fast paths keep the slow path's answers: column validation refuses
exactly what record-by-record validation refuses, the stored hash is `content_hash`, and a
stream written in small windows (with repeats across windows, into empty labels) leaves
the same graph as one batch."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from typing import Any

from sgtest import drop

from stackgraph import cypher
from stackgraph.dump import export_lines, stats
from stackgraph.ingest import GraphIngestor, content_hash
from stackgraph.ingest.identity import edge_ident, target_keys
from stackgraph.schema import (
    EdgeRecord,
    NodeRecord,
    NodeRef,
    RecordBatch,
    validate_edge,
    validate_node,
)
from stackgraph.store import GraphStore


def _svc(name: str) -> NodeRef:
    return NodeRef("Service", {"name": name})


def _mixed() -> RecordBatch:
    """Good records with bad ones in every column the schema checks."""
    nodes = [NodeRecord("Service", {"name": f"s{i}"}, {"tier": i, "owner": "a"}) for i in range(6)]
    nodes += [
        NodeRecord("Service", {"name": "bad-nul"}, {"tier": 1, "owner": "a\x00b"}),
        NodeRecord("Service", {"name": "bad-nan"}, {"tier": math.nan, "owner": "a"}),
        NodeRecord("Service", {"name": ""}, {"tier": 1, "owner": "a"}),
        NodeRecord("Service", {"name": "bad-crit"}, {"criticality": "extreme"}),
        NodeRecord("Service", {"name": "bad-conf"}, {"tier": 1, "owner": "a"}, confidence=1.5),
        NodeRecord("Service", {"name": "bad-src"}, {"tier": 1, "owner": "a"}, source="Rumour"),
        NodeRecord("Service", {"name": "bad-owned"}, {"last_seen": 1.0}),
        NodeRecord("Service", {"nom": "bad-key"}, {"tier": 1}),
        NodeRecord("Nope", {"name": "bad-label"}),
    ]
    edges = [EdgeRecord("CALLS", _svc(f"s{i}"), _svc(f"s{i + 1}"), {"trace_count": i})
             for i in range(5)]  # fmt: skip
    edges += [
        EdgeRecord("CALLS", _svc("s0"), _svc("s2"), {"trace_count": [1, "x"]}),
        EdgeRecord("CALLS", _svc("s0"), NodeRef("Service", {"name": None}), {}),
        EdgeRecord("EXPOSES", _svc("s0"), _svc("s1")),
        EdgeRecord("CALLS", _svc("s0"), _svc("s3"), {"error_rate": math.inf}),
        EdgeRecord("CALLS", _svc("s0"), _svc("s4"), {"trace_count": 1}, status="Gone"),
    ]
    return RecordBatch(nodes, edges)


def test_column_validation_refuses_what_record_validation_refuses(store: GraphStore) -> None:
    batch = _mixed()
    expected = [str(r) for n in batch.nodes for r in validate_node(n)]
    expected += [str(r) for e in batch.edges for r in validate_edge(e)]
    with GraphIngestor(store) as writer:
        report = writer.write(batch)
    assert sorted(str(r) for r in report.rejected) == sorted(expected)
    assert len(expected) == 14
    assert stats(store) == {"nodes": {"Service": 6}, "edges": {"CALLS": 5}}


def test_stored_hash_is_the_content_hash(store: GraphStore) -> None:
    props = {"tier": 2, "owner": 'o"w\\n', "aliases": ["a", "b"], "weight": 0.1}
    node = NodeRecord("Service", {"name": "s"}, props, "StaticInfra", confidence=0.5)
    with GraphIngestor(store) as writer:
        writer.write(RecordBatch([node]), tag="catalog")
    (row,) = store.read(cypher.Query("MATCH (n:Service) RETURN n.hash_catalog AS h"))
    full = {**props, "source": "StaticInfra", "status": "Active", "confidence": 0.5}
    assert row["h"] == content_hash(full)
    assert content_hash({**full, "tier": 3}) != row["h"]


def test_an_edges_stored_hash_covers_its_target(store: GraphStore) -> None:
    """Two edges with the same properties out of one source have two hashes (each names its
    target): the grouped touch finds an unchanged edge by its hash alone."""
    nodes = [NodeRecord("Service", {"name": n}, {}, "StaticInfra") for n in ("a", "b", "c")]
    props = {"trace_count": 3}
    calls = [EdgeRecord("CALLS", NodeRef("Service", {"name": "a"}), NodeRef("Service", {"name": d}),
                        props, "Tempo") for d in ("b", "c")]  # fmt: skip
    with GraphIngestor(store) as writer:
        writer.write(RecordBatch(nodes, calls), tag="mesh")
    query = cypher.Query("MATCH ()-[e:CALLS]->(b) RETURN b.name AS b, e.hash_mesh AS h")
    stored = {r["b"]: r["h"] for r in store.read(query)}
    full = {**props, "source": "Tempo", "status": "Active", "confidence": 1.0}
    targets = target_keys([edge_ident(e) for e in calls])
    assert stored == {t: content_hash(full, t) for t in targets}
    assert stored["b"] != stored["c"]


def _stream(n: int) -> tuple[Iterator[NodeRecord], Iterator[EdgeRecord]]:
    def nodes() -> Iterator[NodeRecord]:
        for i in range(n):
            yield NodeRecord("Service", {"name": f"s{i:04d}"}, {"tier": i % 3}, "StaticInfra")
            if i % 250 == 0:  # the same node again, later: a repeat across windows
                yield NodeRecord("Service", {"name": "s0000"}, {"owner": f"o{i}"}, "StaticInfra")

    def edges() -> Iterator[EdgeRecord]:
        for i in range(n):
            for step in (1, 7):
                j = (i + step) % n
                yield EdgeRecord("CALLS", _svc(f"s{i:04d}"), _svc(f"s{j:04d}"),
                                 {"trace_count": i}, "Tempo")  # fmt: skip
            if i % 300 == 0:
                yield EdgeRecord("CALLS", _svc("s0000"), _svc("s0001"), {"error_rate": 0.5},
                                 "Tempo")  # fmt: skip

    return nodes(), edges()


def test_a_stream_in_small_windows_leaves_the_same_graph_as_one_batch(
    store: GraphStore,
) -> None:
    n = 1200
    with GraphIngestor(store, batch_size=100, window=300) as writer:
        streamed = writer.write_stream(*_stream(n))
    once = export_lines(store)
    drop(store)
    nodes, edges = _stream(n)
    with GraphIngestor(store, batch_size=100_000) as writer:
        whole = writer.write(RecordBatch(list(nodes), list(edges)))
    assert export_lines(store) == once
    assert stats(store) == {"nodes": {"Service": n}, "edges": {"CALLS": 2 * n}}
    assert not streamed.rejected and not whole.rejected
    assert streamed.nodes["Service"].created == whole.nodes["Service"].created == n
    assert streamed.edges["CALLS"].created == 2 * n
    with GraphIngestor(store, batch_size=100, window=300) as writer:
        again = writer.write_stream(*_stream(n))
    assert again.nodes["Service"].created == again.edges["CALLS"].created == 0
    assert again.edges["CALLS"].unchanged >= 2 * n


def test_a_window_naming_a_node_still_being_written_waits_so_its_last_record_stands(
    store: GraphStore,
) -> None:
    """Jobs are written by two threads at once; a window that names a node or edge of an
    earlier window still in flight waits for it. The node `hot` is the last record of every
    even window and the first of every odd one, and each even window's write of it is slow:
    were the next window not to wait, its record would land first and be overwritten (or,
    into an empty label, be created twice)."""

    def nodes() -> Iterator[NodeRecord]:
        for w in range(8):
            hot = NodeRecord("Service", {"name": "hot"}, {"owner": f"o{w}"}, "StaticInfra")
            if w % 2:
                yield hot
            for i in range(19):
                yield NodeRecord("Service", {"name": f"s{w}-{i}"}, {"owner": "x"}, "StaticInfra")
            if not w % 2:
                yield hot

    with GraphIngestor(store, batch_size=5, window=20) as writer:
        write = writer._write

        def slow_for_even_windows(query: cypher.Query, params: Any = None) -> Any:
            if params and any(f'"o{w}"' in str(params["rows"]) for w in range(0, 8, 2)):
                time.sleep(0.2)
            return write(query, params)

        writer._write = slow_for_even_windows
        report = writer.write_stream(nodes(), [])
    (row,) = store.read(cypher.Query("MATCH (n:Service {name: 'hot'}) RETURN n.owner AS o"))
    assert row["o"] == "o7"
    assert report.nodes["Service"].total == 8 * 20
