"""The durable pipeline in one process, on the real FalkorDB: incident records outlive
the app, the list pages, retention trims, an abandoned job is claimed by another worker,
a write-back the lease refuses is retried (not failed, not investigated twice), and a
resolution that arrives mid-investigation still reaches the graph."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from kube_apiserver import FakeKube

from stackgraph.api.incident_store import IncidentStore, UnknownIncident
from stackgraph.api.job_queue import JobQueue
from stackgraph.config import Settings
from stackgraph.ingest.lease import WriterLease
from stackgraph.rca.model import Alert
from stackgraph.store import GraphStore

from .conftest import firing
from .test_api import AUTH, gated_plan, make_client, rows, wait_done


def test_incidents_outlive_the_app_and_take_feedback_after_a_restart(
    settings: Settings, platform: GraphStore, payment_repo: Path, payment_kube: FakeKube
) -> None:
    with make_client(settings, platform, payment_repo, payment_kube) as first:
        first.post("/api/v1/alerts", json=firing("fp-r"), headers=AUTH)
        before = wait_done(first, "fp-r")
    assert before["root_cause"] == "payment"
    with make_client(settings, platform, payment_repo, payment_kube) as second:
        listing = second.get("/api/v1/incidents", headers=AUTH).json()
        assert [i["fingerprint"] for i in listing] == ["fp-r"]
        after = second.get("/api/v1/incidents/fp-r", headers=AUTH).json()
        assert after == before  # plan, hypotheses, evidence, report: all of it
        r = second.post("/api/v1/incidents/fp-r/feedback", headers=AUTH,
                        json={"verdict": "confirmed", "root_cause": "payments-db"})  # fmt: skip
        assert r.status_code == 200 and r.json()["root_cause"] == "payments-db"
    edges = rows(platform, "MATCH (:Incident {fingerprint:'fp-r'})-[r:ROOT_CAUSED_BY]->(s) "
                 "RETURN s.name, r.status ORDER BY s.name")  # fmt: skip
    assert edges == [["payment", "Deprecated"], ["payments-db", "Active"]]


def test_the_list_pages_newest_first(settings: Settings, platform: GraphStore) -> None:
    apart = settings.model_copy(update={"api_correlation_window_s": 0})
    with make_client(apart, platform) as c:
        for i in range(5):
            assert c.post("/api/v1/alerts", json=firing(f"p{i}"), headers=AUTH).status_code == 202
        seen: list[str] = []
        for offset in (0, 2, 4):
            page = c.get("/api/v1/incidents", params={"offset": offset, "limit": 2}, headers=AUTH)
            assert page.headers["x-total-count"] == "5"
            seen += [i["fingerprint"] for i in page.json()]
        assert seen == ["p4", "p3", "p2", "p1", "p0"]
        assert c.get("/api/v1/incidents", params={"limit": 0}, headers=AUTH).status_code == 422


def test_finished_incidents_leave_after_the_retention(platform: GraphStore) -> None:
    now = [1_000.0]
    records = IncidentStore(platform, retention_s=100, clock=lambda: now[0])
    records.intake([Alert({"service": "a"}, fingerprint="old-done"),
                    Alert({"service": "b"}, fingerprint="old-queued")])  # fmt: skip
    records.update("old-done", state="done")
    now[0] = 1_050.0
    assert records.trim() == 0
    now[0] = 1_101.0
    assert records.trim() == 1
    with pytest.raises(UnknownIncident):
        records.get("old-done")
    assert records.get("old-queued").state == "queued"  # work left is never trimmed
    assert [i.fingerprint for i in records.page()[0]] == ["old-queued"]


def test_a_job_its_worker_abandoned_is_claimed_by_another(platform: GraphStore) -> None:
    records = IncidentStore(platform)
    patient, eager = JobQueue(platform, claim_idle_s=60), JobQueue(platform, claim_idle_s=0.2)
    patient.ensure_group()
    records.intake([Alert({"service": "a"}, fingerprint="job-1")])
    job = patient.next("dead-worker", block_ms=100)
    assert job is not None and (job.kind, job.incident) == ("investigate", "job-1")
    assert patient.keep("dead-worker", job)
    assert patient.next("other", block_ms=100) is None  # held, and renewed: not claimable
    time.sleep(0.3)  # the dead worker renews nothing
    claimed = eager.next("other", block_ms=100)
    assert claimed == job
    assert not patient.keep("dead-worker", job)  # it is no longer the dead worker's
    eager.done(claimed)
    assert eager.backlog() == 0


def test_a_write_back_the_lease_refuses_is_retried_not_failed(
    settings: Settings, platform: GraphStore
) -> None:
    quick = settings.model_copy(update={"api_lease_wait_s": 0, "api_claim_idle_s": 0.5})
    lease = WriterLease(platform.conn, settings.graph, who="test-ingest")
    lease.acquire()
    try:
        with make_client(quick, platform) as c:
            c.post("/api/v1/alerts", json=firing("fp-lease"), headers=AUTH)
            deadline = time.monotonic() + 60
            while True:
                detail = c.get("/api/v1/incidents/fp-lease", headers=AUTH).json()
                if detail["writeback"].get("retrying"):
                    break
                assert time.monotonic() < deadline, detail
                time.sleep(0.05)
            assert (
                detail["state"] == "investigating" and "test-ingest" in detail["writeback"]["error"]
            )
            lease.release()
            done = wait_done(c, "fp-lease")
    finally:
        lease.release()
    assert done["state"] == "done" and done["writeback"]["written"] is True
    assert done["investigations"] == 1  # the stored run was written, not run again
    assert rows(platform, "MATCH (i:Incident {fingerprint:'fp-lease'}) RETURN count(i)") == [[1]]


def wait_graph_resolved(platform: GraphStore, fp: str) -> None:
    """Until the graph's Incident says resolved (written after the record said so)."""
    deadline = time.monotonic() + 30
    query = f"MATCH (i:Incident {{fingerprint:'{fp}'}}) RETURN i.incident_status"
    while rows(platform, query) != [["resolved"]]:
        assert time.monotonic() < deadline, rows(platform, query)
        time.sleep(0.05)


def test_a_resolution_during_the_investigation_reaches_the_graph(
    settings: Settings, platform: GraphStore
) -> None:
    gate = threading.Event()
    with make_client(settings, platform, plan_fn=gated_plan(gate)) as c:
        c.post("/api/v1/alerts", json=firing("fp-mid"), headers=AUTH)
        closed = c.post("/api/v1/alerts", json=firing("fp-mid", "resolved"), headers=AUTH)
        assert closed.json()["closed"] == ["fp-mid"]
        gate.set()
        assert wait_done(c, "fp-mid")["status"] == "resolved"
        wait_graph_resolved(platform, "fp-mid")


def test_a_resolution_after_the_write_back_is_written_again(
    settings: Settings, platform: GraphStore
) -> None:
    """The alert resolves between the investigation's write-back and its end: `finish`
    sees the record changed and queues one write job, so the graph is not left open."""
    with make_client(settings, platform) as c:
        service = c.app.state.service  # type: ignore[attr-defined]
        resolved = Alert({"service": "checkout"}, fingerprint="fp-late", status="resolved")
        service.on_concluded.append(lambda outcome: service.receive([resolved]))
        c.post("/api/v1/alerts", json=firing("fp-late"), headers=AUTH)
        assert wait_done(c, "fp-late")["status"] == "resolved"
        wait_graph_resolved(platform, "fp-late")
