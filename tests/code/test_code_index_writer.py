"""The code lane hands its chunks to the writer: collecting writes no vectors, a run refused
for the lease writes none, and a writer that loses its lease stops storing them.

Real Git repos, the session FalkorDB, Qdrant local mode, the offline embedder.
"""

from __future__ import annotations

from pathlib import Path

import codelane_repos as shop
import pytest

from stackgraph.cli.app import run_ingest
from stackgraph.config import Settings
from stackgraph.errors import LeaseHeldError, LeaseLost
from stackgraph.ingest import LANES, LaneInputs, WriterLease
from stackgraph.memory.code_index import CodeIndex
from stackgraph.scheduler import Job, run_job
from stackgraph.store import GraphStore


def _stored(settings: Settings) -> int:
    with CodeIndex.open(settings) as index:
        return index.count()


def test_collect_hands_chunks_over_and_writes_no_vectors(
    tmp_path: Path, settings: Settings, store: GraphStore
) -> None:
    shop.make_repo(tmp_path / "shop")
    batch = LANES["code"].collect(LaneInputs(settings, repos=(tmp_path / "shop",)))
    chunks = batch.code_chunks["shop"]
    assert {c.symbol for c in chunks} >= {"create_payment", "render_receipt"}
    assert _stored(settings) == 0
    # the writer stores them: one run through the lanes embeds exactly those chunks
    reports: list[object] = []
    run_ingest(settings, "code", repos=(tmp_path / "shop",), store=store,
               options={"on_index": lambda _n, r: reports.append(r)})  # fmt: skip
    assert _stored(settings) == len(chunks) == reports[0].embedded  # type: ignore[attr-defined]


def test_a_run_refused_for_the_lease_leaves_the_code_index_untouched(
    tmp_path: Path, settings: Settings, store: GraphStore
) -> None:
    shop.make_repo(tmp_path / "shop")
    with WriterLease(store.conn, settings.graph, ttl_s=30, who="cronjob"):
        with pytest.raises(LeaseHeldError, match="cronjob@"):  # `stackgraph ingest`: exit 75
            run_ingest(settings, "code", repos=(tmp_path / "shop",), store=store)
        skipped = run_job(settings, Job("code", "code", 60, repos=(tmp_path / "shop",)), store)
    assert skipped.status == "skipped", skipped.detail
    assert _stored(settings) == 0


def test_a_lost_lease_stops_the_sync_before_the_next_write(
    tmp_path: Path, settings: Settings, store: GraphStore
) -> None:
    shop.make_repo(tmp_path / "shop")
    batch = LANES["code"].collect(LaneInputs(settings, repos=(tmp_path / "shop",)))
    lease = WriterLease(store.conn, settings.graph, ttl_s=30, who="slow")
    lease.acquire()
    store.conn.set(lease.key, "intruder@elsewhere:1:x", px=30_000)  # taken over
    assert not lease.renew()
    with CodeIndex.open(settings) as index, pytest.raises(LeaseLost, match="taken over"):
        index.sync("shop", batch.code_chunks["shop"], guard=lease.check)
    lease.release()
    assert _stored(settings) == 0
