"""A plan reads the store in three commands: anchor, neighbourhood, what happened to it."""

from __future__ import annotations

from stackgraph.eval.records import DeployEvent, deploy_records, edge_stat_records
from stackgraph.ingest import GraphIngestor
from stackgraph.ingest.lanes.telemetry import EdgeStat
from stackgraph.rca import Alert, investigate
from stackgraph.rca.programs import parse
from stackgraph.store import GraphStore

T0 = 1_800_000_000.0


def _graph_reads(store: GraphStore) -> int:
    stats = store.conn.info("commandstats")
    return sum(int(v["calls"]) for k, v in stats.items() if k.startswith("cmdstat_graph."))


def test_default_playbook_reads_three_times_with_the_same_facts(store: GraphStore) -> None:
    batch = edge_stat_records(
        [
            EdgeStat("frontend", "checkout", 1000, 0.12, 300),
            EdgeStat("checkout", "payment", 900, 0.35, 900),
            EdgeStat("edge", "frontend", 50, 0.0, 20),
        ]
    )
    batch.extend(deploy_records([DeployEvent("payment", "v2", T0 - 300)]))
    with GraphIngestor(store, who="test") as writer:
        writer.write(batch)
    before = _graph_reads(store)
    plan = investigate(store, Alert({"service": "frontend"}, starts_at=T0), at=T0 + 600)
    assert _graph_reads(store) - before == 3
    by_name = {c.service: c for c in plan.candidates}
    assert {"frontend", "checkout", "payment", "edge"} <= set(by_name)
    assert by_name["edge"].position == "upstream"
    assert by_name["payment"].paths == (("frontend", "checkout", "payment"),)
    assert any(e.signal == "change" for e in by_name["payment"].evidence)
    # a program without khop/callers still reads its own parts
    changes_only = parse({"program": "changes-only", "bindings": [
        {"name": "window", "op": "windows"},
        {"name": "me", "op": "anchor"},
        {"name": "releases", "op": "changes", "args": ["me"]},
        {"name": "facts", "op": "merge", "args": ["me", "window", "releases"]},
        {"name": "change", "op": "change", "args": ["facts"]},
        {"name": "answer", "op": "fuse", "args": ["facts", "change"]},
    ]})  # fmt: skip
    alone = investigate(
        store, Alert({"service": "payment"}, starts_at=T0), at=T0 + 600, program=changes_only
    )
    assert [c.service for c in alone.candidates] == ["payment"]
    assert any(e.signal == "change" for e in alone.candidates[0].evidence)
