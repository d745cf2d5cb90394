"""Memory search speed: hybrid search P50/P95 at 1k and 10k episodes, against the raw
vector search of the same store measured in the same run.

Episodes are the labelled set's texts cycled with a serial number; their vectors are
random unit vectors (embedding 10k texts with the numpy MiniLM takes minutes), so the
timings exclude query embedding, which is reported on its own line.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from stackgraph.config import load_settings
from stackgraph.eval.memory import data_path, load_incidents
from stackgraph.ingest import GraphIngestor
from stackgraph.ingest.lanes.catalog import build, load_catalog
from stackgraph.memory import Memory, QdrantVectors, offline_embedder, search
from stackgraph.memory.episodes import _version_batch
from stackgraph.memory.vectors import FalkorVectors, VectorBackend
from stackgraph.store import GraphStore

DIM = 384


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _time(fn: Callable[[int], object], n: int) -> list[float]:
    fn(0)  # warm (BM25 build, caches)
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - t0) * 1000.0)
    return out


def _drop(store: GraphStore) -> None:
    with GraphIngestor(store, who="bench-memory") as writer:
        writer.drop_graph()


def _load(store: GraphStore, memory: Memory, n: int, rng: np.random.Generator) -> float:
    incidents = load_incidents()
    t0 = time.perf_counter()
    with GraphIngestor(store, batch_size=5000, who="bench-memory") as writer:
        writer.write(build(load_catalog(data_path("catalog.yaml"))))
        memory.vectors.prepare(writer)
        for start in range(0, n, 1000):
            batch = None
            rows = []
            for i in range(start, min(n, start + 1000)):
                base = incidents[i % len(incidents)].outcome
                o = type(base)(**{**base.__dict__, "incident_fingerprint": f"b{i}",
                                  "symptom": f"{base.symptom} (case {i})",
                                  "occurred_at": 1e9 + i})  # fmt: skip
                b = _version_batch(o, 1, o.occurred_at, None, 2e9)
                if batch is None:
                    batch = b
                else:
                    batch.extend(b)
                v = rng.standard_normal(DIM).astype(np.float32)
                rows.append((f"b{i}", 1, v / np.linalg.norm(v)))
            assert batch is not None
            writer.write(batch)
            memory.vectors.add(writer, rows)
    return time.perf_counter() - t0


def _measure(store: GraphStore, memory: Memory, queries: int, rng: np.random.Generator) -> dict:
    incidents = load_incidents()
    qv = rng.standard_normal((queries + 1, DIM)).astype(np.float32)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    qs = [incidents[i % len(incidents)] for i in range(queries + 1)]
    raw = _time(lambda i: memory.vectors.query(qv[i], 50), queries)
    hybrid = _time(
        lambda i: search(
            store,
            qs[i].question,
            memory=memory,
            service=qs[i].outcome.service,
            query_vector=qv[i],
            limit=10,
            now=3e9,
        ),
        queries,
    )
    return {"raw": raw, "hybrid": hybrid}


def _row(name: str, n: int, m: dict, load_s: float) -> str:
    r50, r95 = statistics.median(m["raw"]), _pct(m["raw"], 0.95)
    h50, h95 = statistics.median(m["hybrid"]), _pct(m["hybrid"], 0.95)
    return (f"| {name} | {n:,} | {load_s:.1f} s | {r50:.2f} / {r95:.2f} | {h50:.2f} / {h95:.2f} "
            f"| {h95 / r95:.1f}x |")  # fmt: skip


def run(quick: bool = False) -> str:
    sizes = (200, 1000) if quick else (1000, 10_000)
    queries = 50 if quick else 200
    rng = np.random.default_rng(7)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(None, data_dir=Path(tmp), graph="bench_memory")
        with GraphStore.open(settings) as store:
            emb = offline_embedder()
            for n in sizes:
                _drop(store)
                vectors: VectorBackend = FalkorVectors(store, DIM, "bench-random-384")
                memory = Memory(store, emb, vectors)
                load_s = _load(store, memory, n, rng)
                rows.append(
                    _row(
                        "embedded (FalkorDB HNSW)", n, _measure(store, memory, queries, rng), load_s
                    )
                )
                qdrant_url = os.environ.get("QDRANT_URL")
                if qdrant_url:
                    _drop(store)
                    coll = f"bench_memory_{n}"
                    q = QdrantVectors.connect(qdrant_url, coll, DIM, "bench-random-384")
                    if q.client.collection_exists(coll):
                        q.client.delete_collection(coll)
                    memory = Memory(store, emb, q)
                    load_s = _load(store, memory, n, rng)
                    rows.append(_row("Qdrant server", n, _measure(store, memory, queries, rng),
                                     load_s))  # fmt: skip
                    q.client.delete_collection(coll)
            _drop(store)
            emb_ms = _time(lambda i: emb.embed([f"checkout pods OOMKilled again {i}"]), 20)
    lines = [
        "## Memory search",
        "",
        "`python -m stackgraph.bench --only memory` (`make bench`). Hybrid = vector + BM25 +",
        "graph proximity fused by RRF, time filters applied, top 10 with details; raw = the",
        f"vector store's nearest-50 query alone, same store, same run. {queries} queries;",
        f"random unit {DIM}-d vectors (query embedding excluded, measured below).",
        "",
        "| store | episodes | load | raw vector P50 / P95 ms | hybrid P50 / P95 ms "
        "| hybrid / raw (P95) |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        f"Query embedding (offline MiniLM, numpy): P50 {statistics.median(emb_ms):.1f} ms, "
        f"P95 {_pct(emb_ms, 0.95):.1f} ms. Qdrant server rows appear when `QDRANT_URL` is set.",
        "",
    ]
    return "\n".join(lines)
