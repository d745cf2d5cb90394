"""Fan-in counts dependency edges only: RCA outcomes written back (FIRED_ON, AFFECTS,
EVIDENCED_BY, ROOT_CAUSED_BY, ...) leave a service's fan-in, fan-out and topology score as
they were. Real embedded FalkorDB, outcomes written through `OutcomeWriter`."""

from __future__ import annotations

import re
from typing import Any

from stackgraph import cypher
from stackgraph.ingest import GraphIngestor
from stackgraph.rca import Alert, investigate
from stackgraph.rca.agent import (
    AgentRun,
    Ending,
    EvidenceSink,
    Hypothesis,
    HypothesisState,
    ToolEvidence,
    Verdict,
    build_report,
)
from stackgraph.rca.outcome import IncidentOutcome, OutcomeWriter, outcome_records
from stackgraph.schema import EDGES, EdgeRecord, NodeRecord, NodeRef, RecordBatch
from stackgraph.store import GraphStore

T0 = 1_800_000_000.0
DEPENDENCY = {"CALLS", "READS_FROM", "PUBLISHES_TO", "CONSUMES_FROM"}


def svc(name: str) -> NodeRef:
    return NodeRef("Service", {"name": name})


def build(store: GraphStore) -> None:
    """frontend → checkout → payment (failing) → payments-db; checkout → cart; payment
    publishes to a subject; a CodeUnit IMPLEMENTS payment (structure, not a dependency)."""
    calls = {"trace_count": 500, "error_rate": 0.12, "latency_p95_ms": 900.0}
    healthy = {"trace_count": 800, "error_rate": 0.0, "latency_p95_ms": 15.0}
    db = NodeRef("Datastore", {"name": "payments-db"})
    subject = NodeRef("NatsSubject", {"subject": "payments.charged"})
    code = NodeRef("CodeUnit", {"repo": "shop", "path": "services/payment/app/main.py"})
    nodes = [svc(n) for n in ("frontend", "checkout", "payment", "cart")]
    batch = RecordBatch(nodes=[
        NodeRecord(ref.label, ref.key, {}, "StaticCode") for ref in (*nodes, db, subject, code)
    ], edges=[
        EdgeRecord("CALLS", svc("frontend"), svc("checkout"), healthy, "Tempo"),
        EdgeRecord("CALLS", svc("checkout"), svc("payment"), calls, "Tempo"),
        EdgeRecord("CALLS", svc("checkout"), svc("cart"), healthy, "Tempo"),
        EdgeRecord("READS_FROM", svc("payment"), db, {}, "StaticCode"),
        EdgeRecord("PUBLISHES_TO", svc("payment"), subject, {}, "StaticCode"),
        EdgeRecord("IMPLEMENTS", code, svc("payment"), {}, "StaticCode"),
    ])  # fmt: skip
    with GraphIngestor(store, who="test") as writer:
        report = writer.write(batch)
    assert not report.rejected, report.rejected


def outcome(fingerprint: str, opened_at: float) -> IncidentOutcome:
    """An incident on checkout, root-caused by payment (Validated by two lines)."""
    alert = Alert({"alertname": "HighErrorRate", "service": "checkout"},
                  {"summary": "checkout 5xx"}, opened_at, fingerprint)  # fmt: skip
    sink = EvidenceSink({"payment": Hypothesis("payment", 1, 0.8)})
    for tool, source in (("prometheus_query", "Prometheus"), ("git_log", "Git"),
                         ("query_stack_graph", "Tempo")):  # fmt: skip
        sink.add(ToolEvidence(tool, Verdict.SUPPORTS, f"{tool} says payment", source,
                              check="default", hypothesis="payment"))  # fmt: skip
    assert sink.hypotheses["payment"].state == HypothesisState.VALIDATED
    report = build_report(alert, sink, "concluded", "payment")
    run = AgentRun(Ending.CONCLUDED, "payment", sink, report)
    return IncidentOutcome(fingerprint, alert, "checkout", opened_at, run=run)


def degrees(store: GraphStore) -> dict[str, tuple[int, int]]:
    """(fan_in, fan_out) per node as the read path's templates give them."""
    params: dict[str, Any] = {"anchor": "checkout", "limit": 100, "callers": 50, "at": None}
    rows = store.read(cypher.load("rca_neighbourhood_3"), params)
    out = {str(r["names"][-1]): (int(r["fan_in"]), int(r["fan_out"])) for r in rows}
    anchor = store.read(cypher.load("rca_anchor_services"),
                        {"names": ["checkout"], "limit": 1, "at": None})  # fmt: skip
    out["checkout"] = (int(anchor[0]["fan_in"]), int(anchor[0]["fan_out"]))
    return out


def topology(store: GraphStore) -> dict[str, float]:
    plan = investigate(store, Alert({"service": "checkout"}, starts_at=T0), at=T0 + 600)
    assert plan.candidates, plan.reason
    return {c.service: c.signals["topology"] for c in plan.candidates}


def test_every_degree_in_the_templates_names_the_dependency_types() -> None:
    """Written literally (templates are constant text); a misspelt type would count 0."""
    degree = re.compile(r"\b(?:in|out)degree\((\w+)((?:, '[A-Z_]+')*)\)")
    found = 0
    for name in cypher.names():
        for match in degree.finditer(cypher.load(name)):
            found += 1
            types = set(re.findall(r"'([A-Z_]+)'", match.group(2)))
            assert types == DEPENDENCY, (name, match.group(0))
            assert types <= set(EDGES)
    assert found == 4 * 4 + 2 + 4  # two per row kind in rca_neighbourhood_1..4, two for the
    # anchor, two per branch for the unlinked services


def test_fan_in_counts_dependency_edges_only(store: GraphStore) -> None:
    build(store)
    got = degrees(store)
    assert got["payment"] == (1, 2)  # called by checkout; reads payments-db, publishes
    assert got["checkout"] == (1, 2)  # called by frontend; calls payment and cart
    assert got["frontend"] == (0, 1)  # the caller row
    assert got["payments-db"] == (1, 0)


def test_written_outcomes_leave_fan_in_and_topology_unchanged(store: GraphStore) -> None:
    build(store)
    before_degrees, before_topology = degrees(store), topology(store)
    writer = OutcomeWriter(store)
    for i in range(3):
        report = writer.write(outcome_records(outcome(f"fp-{i}", T0 + i)))
        assert not report.rejected, report.rejected
    # the outcome edges are there, on both the symptom and the root cause ...
    kinds = store.read(
        cypher.load("sg_neighbours_in"), {"names": ["checkout", "payment"], "limit": 100}
    )
    arriving = {(str(r["b"]["name"]), str(r["type"])) for r in kinds}
    assert {("checkout", "FIRED_ON"), ("checkout", "AFFECTS"), ("payment", "EVIDENCED_BY"),
            ("payment", "ROOT_CAUSED_BY")} <= arriving  # fmt: skip
    assert {t for _, t in arriving} - DEPENDENCY  # and not only dependencies arrive
    # ... and count for nothing in fan-in, fan-out or the topology score
    assert degrees(store) == before_degrees
    assert topology(store) == before_topology
