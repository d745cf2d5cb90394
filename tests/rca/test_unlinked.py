"""An alerting service the graph links to nothing (`neighbourhood.unlinked`): the cluster's
inventory through the real infra lane, with or without Tempo's calls, and the read path on
a real embedded FalkorDB."""

from __future__ import annotations

from pathlib import Path

from test_investigate import T0, Series, build, names

from stackgraph.config import Settings
from stackgraph.eval.lane_files import inventory, write_yaml
from stackgraph.ingest import GraphIngestor, run_lanes
from stackgraph.ingest.lanes.telemetry import EdgeStat
from stackgraph.rca import Alert, investigate
from stackgraph.rca.facts import WIDEST
from stackgraph.schema import NodeRecord, RecordBatch
from stackgraph.store import GraphStore

SERVICES = ["frontend", "checkout", "payment", "catalog", "worker"]


def cluster(store: GraphStore, settings: Settings, tmp_path: Path) -> None:
    """The workloads as the Kubernetes API lists them, and one service of another team."""
    folder = write_yaml(tmp_path / "inventory" / "workloads.yaml", inventory(SERVICES, "shop"))
    _, failures = run_lanes(store, settings, "infra", manifests=folder.parent)
    assert not failures, failures
    elsewhere = NodeRecord("Service", {"name": "billing"}, {"namespace": "finance"})
    with GraphIngestor(store, who="test") as writer:
        writer.write(RecordBatch(nodes=[elsewhere]))


def test_with_no_call_known_every_service_of_the_namespace_is_a_candidate(
    store: GraphStore, settings: Settings, tmp_path: Path
) -> None:
    """No tracing: the graph knows the workloads, not who calls whom."""
    cluster(store, settings, tmp_path)
    alert = Alert({"service": "frontend"}, starts_at=T0)
    plan = investigate(store, alert, at=T0 + 600, metrics=Series({"worker": 9.0}))
    assert names(plan)[0] == "worker", [(c.service, c.signals) for c in plan.candidates]
    assert set(names(plan)) == set(SERVICES)  # billing: another namespace, not this platform
    top = plan.candidates[0]
    assert top.position == "unlinked" and not top.paths
    where = [e.summary for e in top.evidence if e.signal == "topology"]
    assert where and "the graph links frontend to nothing" in where[0]
    assert any(
        "the 4 other service(s) of its namespace shop are candidates" in n for n in plan.notes
    )
    flat = investigate(store, alert, at=T0 + 600, metrics=Series({}))
    assert names(flat)[0] == "frontend"  # nothing moved: the alert's own service leads


def test_where_the_anchor_has_calls_the_graph_places_the_rest_away(
    store: GraphStore, settings: Settings, tmp_path: Path
) -> None:
    cluster(store, settings, tmp_path)
    build(store, [EdgeStat("frontend", "checkout", 1000, 0.0, 30),
                  EdgeStat("checkout", "payment", 500, 0.0, 20),
                  EdgeStat("frontend", "catalog", 4000, 0.0, 10)])  # fmt: skip
    alert = Alert({"service": "frontend"}, starts_at=T0)
    plan = investigate(store, alert, at=T0 + 600, metrics=Series({"payment": 9.0}))
    assert names(plan)[0] == "payment"
    assert "worker" not in names(plan)  # no call of its own while others have: no traffic
    assert not any("links frontend to nothing" in n for n in plan.notes)


def test_an_anchor_that_names_no_namespace_takes_every_service_up_to_the_cap(
    store: GraphStore,
) -> None:
    """Services known by name alone (no manifests): every other one is a candidate, in
    name order up to WIDEST, whatever the plan is asked to show: a replay that ranks every
    service weighs what a user's plan of ten weighs, and the plan says it truncated."""
    nodes = [NodeRecord("Service", {"name": f"svc-{i:02d}"}, {}) for i in range(WIDEST + 10)]
    with GraphIngestor(store, who="test") as writer:
        writer.write(RecordBatch(nodes=nodes))
    alert = Alert({"service": "svc-00"}, starts_at=T0)
    wide = investigate(store, alert, at=T0 + 600, limit=200, metrics=Series({"svc-07": 9.0}))
    assert names(wide)[0] == "svc-07", [(c.service, c.signals) for c in wide.candidates]
    assert set(names(wide)) == {f"svc-{i:02d}" for i in range(WIDEST + 1)}
    assert f"the namespace's services truncated at {WIDEST}, in name order" in wide.notes
    ten = investigate(store, alert, at=T0 + 600, limit=10, metrics=Series({"svc-07": 9.0}))
    assert names(ten) == names(wide)[:10]
