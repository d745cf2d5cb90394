"""The read path on a FalkorDB replica (`falkordb_read_url`): two embedded servers, the
second `REPLICAOF` the first. Plans and graph queries read the replica; write-back,
incidents and jobs stay on the primary. Counted by each server's own command stats."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from fastapi.testclient import TestClient

from stackgraph.api import create_app
from stackgraph.config import Settings
from stackgraph.embedded import EmbeddedFalkorDB
from stackgraph.store import GraphStore

from .conftest import firing
from .test_api import AUTH, wait_done
from .test_serve_durable import free_port

REPO = Path(__file__).resolve().parents[2]


def ro_queries(conn: redis.Redis) -> int:
    stats = conn.info("commandstats")
    return int(stats.get("cmdstat_graph.RO_QUERY", stats.get("cmdstat_graph.ro_query", {}))
               .get("calls", 0))  # fmt: skip


@pytest.fixture
def primary_and_replica(tmp_path: Path) -> Iterator[tuple[EmbeddedFalkorDB, EmbeddedFalkorDB]]:
    primary = EmbeddedFalkorDB(tmp_path / "primary", free_port())
    replica = EmbeddedFalkorDB(tmp_path / "replica", free_port())
    primary.start()
    replica.start()
    try:
        assert primary.endpoint is not None and replica.endpoint is not None
        replica.endpoint.client().execute_command("REPLICAOF", "127.0.0.1",
                                                  str(primary.endpoint.port))  # fmt: skip
        yield primary, replica
    finally:
        replica.stop()
        primary.stop()


def test_plans_and_graph_queries_read_the_replica(
    settings: Settings, primary_and_replica: tuple[EmbeddedFalkorDB, EmbeddedFalkorDB]
) -> None:
    from stackgraph.cli.app import run_ingest

    primary, replica = primary_and_replica
    assert primary.endpoint is not None and replica.endpoint is not None
    on_primary = settings.model_copy(update={"falkordb_url": primary.endpoint.url(),
                                             "api_memory": False})  # fmt: skip
    with GraphStore.open(on_primary) as store:
        run_ingest(on_primary, "catalog", catalog=REPO / "examples/platform/catalog.yaml",
                   store=store)  # fmt: skip
    replica_conn = redis.Redis(host="127.0.0.1", port=replica.endpoint.port, decode_responses=True)
    primary_conn = redis.Redis(host="127.0.0.1", port=primary.endpoint.port, decode_responses=True)
    deadline = time.monotonic() + 60
    while not replica_conn.exists(settings.graph):  # the catalog reached the replica
        assert time.monotonic() < deadline, replica_conn.info("replication")
        time.sleep(0.1)
    both = on_primary.model_copy(update={"falkordb_read_url": replica.endpoint.url()})
    with TestClient(create_app(both, token=AUTH["Authorization"].split()[1])) as c:
        before = ro_queries(primary_conn), ro_queries(replica_conn)
        g = c.post("/api/v1/tools/query_stack_graph", headers=AUTH,
                   json={"service": "frontend", "other": "payment"})  # fmt: skip
        assert g.json()["paths"] == [["frontend", "checkout", "payment"]]
        assert ro_queries(primary_conn) == before[0] and ro_queries(replica_conn) > before[1]
        planned_before = ro_queries(replica_conn)
        c.post("/api/v1/alerts", json=firing("fp-replica"), headers=AUTH)
        done = wait_done(c, "fp-replica")
        assert ro_queries(replica_conn) > planned_before  # the plan was read there
    assert done["plan"]["anchor"] == "checkout" and done["writeback"]["written"] is True
    written = primary_conn.execute_command(
        "GRAPH.RO_QUERY", settings.graph,
        "MATCH (i:Incident {fingerprint:'fp-replica'}) RETURN i.service")  # fmt: skip
    assert written[1] == [["checkout"]]  # write-back went to the primary
