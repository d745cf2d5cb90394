"""Change evidence as a human reads it: one line per Change (however many paths reach the
service), rollouts named by chart/image and revision rather than a release digest, and a
plan table without signals that round to nothing."""

from __future__ import annotations

import io

from rich.console import Console

from stackgraph.cli.investigate import print_plan
from stackgraph.ingest import GraphIngestor
from stackgraph.rca import Alert, investigate
from stackgraph.rca.change_history import deploy_ref
from stackgraph.rca.model import Candidate, Plan
from stackgraph.schema import EdgeRecord, NodeRecord, NodeRef, RecordBatch
from stackgraph.store import GraphStore

T0 = 1_800_000_000.0
SHA = "a9fae1a5b2e5cc2782e441d088fee3eeb04f2d55"
DIGEST = "sha256:6b8c0d2e4f6a8b0c2d4e6f8a0b2c4d6e8f0a2b4c9a7b5c3d1e2f4a6b8c0d2e4f"


def svc(name: str) -> NodeRef:
    return NodeRef("Service", {"name": name})


def shop(store: GraphStore) -> None:
    """checkout → payment; PR #17 changed payment directly and through its main.py; a
    HelmRelease of payment carries it (as the flux lane writes it)."""
    unit = NodeRecord("CodeUnit", {"repo": "shop", "path": "services/payment/app/main.py"})
    merged = {"committed_at": T0 - 1740, "summary": "Merge pull request #17"}
    change = NodeRecord("Change", {"repo": "shop", "commit_sha": SHA}, merged, "Git")
    deploy_key = {"service": "payment", "image_digest": DIGEST, "deployed_at": T0 - 780}
    deploy = NodeRecord("Deploy", deploy_key, {
        "via": "HelmRelease", "release": "shop/payment", "chart_name": "payment",
        "chart_version": "1.9.2+a9fae1a5b2e5", "revision": SHA[:12], "release_version": 4,
    }, "StaticInfra")  # fmt: skip
    failing = {"error_rate": 0.14, "latency_p95_ms": 1540.0}
    batch = RecordBatch(
        nodes=[NodeRecord("Service", {"name": n}) for n in ("checkout", "payment")]
        + [unit, change, deploy],
        edges=[
            EdgeRecord("CALLS", svc("checkout"), svc("payment"), failing, "Tempo"),
            EdgeRecord("IMPLEMENTS", unit.ref, svc("payment")),
            EdgeRecord("CHANGED", change.ref, svc("payment"), {}, "Git"),
            EdgeRecord("CHANGED", change.ref, unit.ref, {}, "Git"),
            EdgeRecord("DEPLOYED", deploy.ref, svc("payment"), {}, "StaticInfra"),
        ],
    )
    with GraphIngestor(store, who="test") as writer:
        report = writer.write(batch)
    assert not report.rejected, report.rejected


def test_a_change_reaching_a_service_two_ways_is_one_piece_of_evidence(store: GraphStore) -> None:
    shop(store)
    plan = investigate(store, Alert({"service": "checkout"}, starts_at=T0), at=T0 + 300)
    payment = next(c for c in plan.candidates if c.service == "payment")
    changes = [e.summary for e in payment.evidence if e.signal == "change"]
    assert sum(f"Change shop@{SHA[:12]}" in s for s in changes) == 1, changes
    deploys = [s for s in changes if s.startswith("Deploy")]
    assert len(deploys) == 1 and "sha256:" not in deploys[0], deploys
    assert deploys[0].startswith("Deploy payment 1.9.2+a9fae1a5b2e5 at "), deploys


def test_deploy_ref_names_what_a_human_recognises() -> None:
    helm = {"via": "HelmRelease", "chart_name": "payment", "chart_version": "1.9.2",
            "revision": SHA, "image_digest": DIGEST}  # fmt: skip
    assert deploy_ref(helm) == f"payment 1.9.2, revision {SHA[:12]}"
    assert deploy_ref({**helm, "chart_version": "1.9.2+a9fae1a"}) == "payment 1.9.2+a9fae1a"
    assert deploy_ref({"chart_version": "0.3.0", "image_digest": DIGEST}) == "chart 0.3.0"
    kustomization = {"via": "Kustomization", "kustomization": "flux-system/apps",
                     "revision": SHA, "image_digest": DIGEST}  # fmt: skip
    assert deploy_ref(kustomization) == f"flux-system/apps, revision {SHA[:12]}"
    assert deploy_ref({"image": "ghcr.io/shop/payment:1.4", "image_digest": DIGEST}) == (
        "ghcr.io/shop/payment:1.4"
    )
    assert deploy_ref({"image_digest": DIGEST}) == DIGEST
    assert deploy_ref({}) == "?"


def test_the_plan_table_hides_signals_that_round_to_nothing() -> None:
    plan = Plan("checkout", [
        Candidate("payment", 0.5, {"telemetry": 0.85, "blame": 0.004, "change": 0.005,
                                   "history": 0.0}),
    ])  # fmt: skip
    buf = io.StringIO()
    print_plan(plan, Console(file=buf, width=200, color_system=None))
    row = next(line for line in buf.getvalue().splitlines() if "payment" in line)
    assert "telemetry 0.85" in row and "change 0.01" in row
    assert "blame" not in row and "history" not in row and "0.00" not in row
