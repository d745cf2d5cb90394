"""Ingest benchmark: the batched single writer against its two references.

(a) the naive writer, one `MERGE` query per record (same templates' logic, `*_merge_one`),
measured on a sample because at 110k records it would run for minutes; rates compare.
(b) `falkordb-bulk-loader` into a fresh graph: no MERGE, no validation — the physical limit.
All three run against the same embedded FalkorDB in one process run.
"""

from __future__ import annotations

import csv
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from stackgraph import cypher
from stackgraph.config import load_settings
from stackgraph.embedded import EmbeddedFalkorDB
from stackgraph.ingest import GraphIngestor, IngestReport, content_hash
from stackgraph.schema import EdgeRecord, NodeRecord, NodeRef, RecordBatch
from stackgraph.store import GraphStore

from .ingest_large import calls, services

CRIT = ("low", "medium", "high", "critical")


def generate(services: int, edges: int, seed: int = 7) -> RecordBatch:
    """A platform of `services` Service nodes and `edges` distinct CALLS edges."""
    rng = random.Random(seed)
    nodes = [
        NodeRecord(
            "Service",
            {"name": f"svc-{i:05d}"},
            {
                "criticality": CRIT[i % 4],
                "owner": f"team-{i % 50}",
                "tier": i % 4,
                "namespace": f"ns-{i % 20}",
            },
            "StaticInfra",
        )
        for i in range(services)
    ]
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < edges:
        a, b = rng.randrange(services), rng.randrange(services)
        if a != b:
            pairs.add((a, b))
    out = [
        EdgeRecord(
            "CALLS",
            NodeRef("Service", {"name": f"svc-{a:05d}"}),
            NodeRef("Service", {"name": f"svc-{b:05d}"}),
            {
                "trace_count": rng.randrange(1, 10_000),
                "error_rate": round(rng.random() / 10, 4),
                "latency_p95_ms": round(rng.uniform(1, 900), 1),
            },
            "Tempo",
        )
        for a, b in sorted(pairs)
    ]
    return RecordBatch(nodes, out)


def _server_cpu(server: EmbeddedFalkorDB) -> float:
    """CPU seconds the embedded server has used (Linux `/proc`; 0 where unknown)."""
    try:
        pid = server.process.pid if server.process else 0
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def _timed_write(
    writer: GraphIngestor, batch: RecordBatch, server: EmbeddedFalkorDB
) -> tuple[IngestReport, float, float, float]:
    """A write with its wall time and where the CPU went: (report, wall, Python CPU of
    this process, CPU of the server). Python and the server overlap on two cores, so the
    wall time is about the larger of the two when the machine is otherwise idle."""
    cpu, srv = time.process_time(), _server_cpu(server)
    t0 = time.perf_counter()
    report = writer.write(batch)
    wall = time.perf_counter() - t0
    return report, wall, time.process_time() - cpu, _server_cpu(server) - srv


def _naive(writer: GraphIngestor, batch: RecordBatch, now: float) -> float:
    node_q = cypher.render("node_merge_one", label="Service", tag="StaticInfra")
    edge_q = cypher.render("edge_merge_one", edge=("CALLS", "Service", "Service"), tag="Tempo")
    start = time.perf_counter()
    for n in batch.nodes:
        props = {**n.props, "source": str(n.source), "status": "Active", "confidence": 1.0}
        params = {"k0": n.key["name"], "p": props, "h": content_hash(props), "now": now}
        writer._write(node_q, params)
    for e in batch.edges:
        props = {**e.props, "source": str(e.source), "status": "Active", "confidence": 1.0}
        writer._write(
            edge_q,
            {"s0": e.src.key["name"], "d0": e.dst.key["name"], "p": props,
             "h": content_hash(props, e.dst.key["name"]), "now": now},
        )  # fmt: skip
    return time.perf_counter() - start


def _bulk(
    url: str, nodes: Iterable[NodeRecord], edges: Iterable[EdgeRecord], graph: str, work: Path
) -> float:
    """falkordb-bulk-insert of the same records into a fresh graph (CSV written first,
    not timed)."""
    nodes_csv, edges_csv = work / "Service.csv", work / "CALLS.csv"
    with nodes_csv.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["name", "criticality", "owner", "tier", "namespace", "source", "status"])
        for n in nodes:
            p = n.props
            w.writerow([n.key["name"], p["criticality"], p["owner"], p["tier"], p["namespace"],
                        "StaticInfra", "Active"])  # fmt: skip
    with edges_csv.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["src", "dst", "trace_count", "error_rate", "latency_p95_ms", "source"])
        for e in edges:
            p = e.props
            w.writerow([e.src.key["name"], e.dst.key["name"], p["trace_count"], p["error_rate"],
                        p["latency_p95_ms"], "Tempo"])  # fmt: skip
    tool = Path(sys.executable).with_name("falkordb-bulk-insert")
    # redis-py's default 5 s socket timeout trips while the server takes one GRAPH.BULK of
    # a 1M-edge load (seen on a busy 2-core machine): the loader gets as long as it needs
    slow = url + ("&" if "?" in url else "?") + "socket_timeout=600"
    start = time.perf_counter()
    subprocess.run(
        [str(tool), "-u", slow, "-n", str(nodes_csv), "-r", str(edges_csv), "-i", "Service:name",
         graph],
        check=True, capture_output=True,
    )  # fmt: skip
    return time.perf_counter() - start


def _large(url: str, work: Path, quick: bool) -> dict[str, float]:
    """The streamed 100k / 1M write in a process of its own (its peak RSS is its own), then
    the bulk loader on the same records, same server."""
    n, m = (10_000, 100_000) if quick else (100_000, 1_000_000)
    proc = subprocess.run(
        [sys.executable, "-m", "stackgraph.bench.ingest_large", url, "bench_large", str(n), str(m)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    out: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    out["services"], out["edges"] = n, m
    out["bulk_seconds"] = _bulk(url, services(n), calls(n, m), "bench_large_bulk", work)
    return out


def run(quick: bool = False) -> str:
    services, edges = (1_000, 10_000) if quick else (10_000, 100_000)
    sample_services, sample_edges = (200, 800) if quick else (1_000, 4_000)
    batch = generate(services, edges)
    records = services + edges
    work = Path(tempfile.mkdtemp(prefix="sg-bench-ingest-"))
    server = EmbeddedFalkorDB(work / "data")
    endpoint = server.start()
    try:
        settings = load_settings(None, falkordb_url=endpoint.url(), graph="bench_batched")
        with GraphStore.open(settings) as store, GraphIngestor(store, batch_size=5000) as writer:
            writer.apply_schema()
            first, t_first, py_first, srv_first = _timed_write(writer, batch, server)
            writer.clock = lambda: time.time() + 60
            second, t_second, py_second, srv_second = _timed_write(writer, batch, server)
        assert not first.rejected and second.nodes["Service"].unchanged == services

        sample = generate(sample_services, sample_edges, seed=11)
        naive_settings = load_settings(None, falkordb_url=endpoint.url(), graph="bench_naive")
        with GraphStore.open(naive_settings) as store, GraphIngestor(store) as writer:
            writer.apply_schema()
            t_naive = _naive(writer, sample, time.time())
        naive_rate = (sample_services + sample_edges) / t_naive

        t_bulk = _bulk(endpoint.url(), batch.nodes, batch.edges, "bench_bulk", work)
        large = _large(endpoint.url(), work, quick)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)

    rate = records / t_first
    bulk_rate = records / t_bulk
    cmd = "make bench" if not quick else "python -m stackgraph.bench --only ingest --quick"
    return "\n".join(
        [
            f"## Ingest: {services:,} services + {edges:,} CALLS edges",
            "",
            f"Command: `{cmd}` (embedded FalkorDB, batch 5,000 rows, 2 cores).",
            "",
            "| run | records | seconds | records/s | ratio |",
            "|---|---|---|---|---|",
            f"| batched writer, first ingest | {records:,} | {t_first:.2f} | {rate:,.0f} | 1 |",
            f"| batched writer, re-ingest (unchanged) | {records:,} | {t_second:.2f} | "
            f"{records / t_second:,.0f} | re-ingest / first = **{t_second / t_first:.2f}** "
            "(target <= 0.5) |",
            f"| (a) one MERGE per record (sample {sample_services:,} + {sample_edges:,}) | "
            f"{sample_services + sample_edges:,} | {t_naive:.2f} | {naive_rate:,.0f} | "
            f"batched is **{rate / naive_rate:.1f}x** faster (target >= 20x) |",
            f"| (b) falkordb-bulk-insert, fresh graph | {records:,} | {t_bulk:.2f} | "
            f"{bulk_rate:,.0f} | batched takes **{t_first / t_bulk:.2f}x** the bulk loader's "
            "time (target <= 2x) |",
            "",
            "Where the CPU went (seconds; the writer's process, and the embedded server): "
            f"first ingest Python {py_first:.2f}, FalkorDB {srv_first:.2f}; re-ingest Python "
            f"{py_second:.2f}, FalkorDB {srv_second:.2f}. Load average after the run: "
            f"{os.getloadavg()[0]:.2f}.",
            "",
            f"### Streamed: {large['services']:,.0f} services + {large['edges']:,.0f} CALLS edges",
            "",
            "`GraphIngestor.write_stream` over generated records (one window in memory), in a "
            "process of its own; the bulk loader on the same records, same server.",
            "",
            "| run | records | seconds | records/s | peak RSS | ratio |",
            "|---|---|---|---|---|---|",
            f"| batched writer, streamed, first ingest | {large['records']:,.0f} | "
            f"{large['seconds']:.1f} | {large['records'] / large['seconds']:,.0f} | "
            f"{large['peak_rss_mb']:,.0f} MB (at start {large['rss_before_mb']:,.0f} MB) | 1 |",
            f"| of which making the records (the generator, not the writer) | | "
            f"{large['generate_seconds']:.1f} | | | batched writer alone takes "
            f"**{(large['seconds'] - large['generate_seconds']) / large['bulk_seconds']:.2f}x** "
            "the bulk loader's time |",
            f"| falkordb-bulk-insert, fresh graph | {large['records']:,.0f} | "
            f"{large['bulk_seconds']:.1f} | {large['records'] / large['bulk_seconds']:,.0f} | "
            f"— | batched takes **{large['seconds'] / large['bulk_seconds']:.2f}x** the bulk "
            "loader's time |",
            "",
        ]
    )
