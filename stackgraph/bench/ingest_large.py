"""The ingest benchmark at scale: 100,000 services and 1,000,000 CALLS edges, streamed.

Run in a process of its own (`python -m stackgraph.bench.ingest_large URL GRAPH N M`), so
its peak RSS (`ru_maxrss`) is this write's alone; it prints one JSON line. The records are
generated lazily and handed to `GraphIngestor.write_stream`, as a lane that streams would:
memory holds one window of records, not a million.
"""

from __future__ import annotations

import itertools
import json
import resource
import sys
import time
from collections.abc import Iterator

from stackgraph.config import load_settings
from stackgraph.ingest import GraphIngestor
from stackgraph.schema import EdgeRecord, NodeRecord, NodeRef
from stackgraph.store import GraphStore

CRIT = ("low", "medium", "high", "critical")
STEPS = (1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233)
"""Service i calls i + step (mod n): distinct edges without remembering them."""


def service(i: int) -> NodeRecord:
    props = {"criticality": CRIT[i % 4], "owner": f"team-{i % 50}", "tier": i % 4,
             "namespace": f"ns-{i % 20}"}  # fmt: skip
    return NodeRecord("Service", {"name": f"svc-{i:06d}"}, props, "StaticInfra")


def call(i: int, j: int) -> EdgeRecord:
    props = {
        "trace_count": (i * 7919 + j) % 10_000 + 1,
        "error_rate": ((i + j) % 97) / 1000,
        "latency_p95_ms": float((i * j) % 900) + 0.5,
    }
    src, dst = (
        NodeRef("Service", {"name": f"svc-{i:06d}"}),
        NodeRef("Service", {"name": f"svc-{j:06d}"}),
    )
    return EdgeRecord("CALLS", src, dst, props, "Tempo")


def services(n: int) -> Iterator[NodeRecord]:
    return (service(i) for i in range(n))


def calls(n: int, m: int) -> Iterator[EdgeRecord]:
    per = -(-m // n)
    if per > len(STEPS) or max(STEPS[:per]) >= n:
        raise ValueError(f"{m} edges over {n} services need more distinct steps")
    sent = 0
    for i in range(n):
        for step in STEPS[:per]:
            if sent == m:
                return
            yield call(i, (i + step) % n)
            sent += 1


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(url: str, graph: str, n: int, m: int) -> None:
    settings = load_settings(None, falkordb_url=url, graph=graph)
    t0 = time.perf_counter()  # what making the records costs, apart from writing them
    for _ in itertools.chain(services(n), calls(n, m)):
        pass
    generate = time.perf_counter() - t0
    before = peak_rss_mb()
    with GraphStore.open(settings) as store, GraphIngestor(store, who="bench") as writer:
        writer.apply_schema()
        t0 = time.perf_counter()
        report = writer.write_stream(services(n), calls(n, m))
        seconds = time.perf_counter() - t0
    assert not report.rejected, report.rejected[:3]
    assert report.edges["CALLS"].created == m, report.as_dict()
    out = {"seconds": seconds, "generate_seconds": generate, "records": n + m,
           "rss_before_mb": before, "peak_rss_mb": peak_rss_mb()}  # fmt: skip
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
