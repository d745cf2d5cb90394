"""Code index benchmark: is qdrant-client's local brute-force scan good enough for code?

Three ratios, each against a reference measured in the same run:
- search: local-mode `query_points` over N chunk vectors vs a bare numpy scan (the floor);
- re-ingest: `sync` of unchanged chunks (hash check only) vs the first `sync` (embedding);
- chunk length: embedding the example repo's chunks at 128 tokens vs 256.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from stackgraph.config import load_settings
from stackgraph.ingest import GraphIngestor
from stackgraph.store import GraphStore


def _per_call(fn: object, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()  # type: ignore[operator]
    return (time.perf_counter() - start) / n


def _example_chunks() -> list[object]:
    from stackgraph.ingest.lanes.code import analyse
    from stackgraph.ingest.lanes.code.source import assign_services, python_files
    from stackgraph.repo_config import RepoSpec

    root = Path(__file__).resolve().parents[2] / "examples" / "platform" / "repo"
    spec = RepoSpec(path=root, name="shop")
    chunks: list[object] = []
    for service, sf in sorted(assign_services(python_files(root), spec).items()):
        files = [(p, (root / p).read_text(encoding="utf-8")) for p, _ in sf.files]
        chunks += analyse(files, service, repo="shop", root=sf.root).chunks
    return chunks


def run(quick: bool = False) -> str:
    from qdrant_client import QdrantClient, models

    from stackgraph.memory.code_index import CodeIndex
    from stackgraph.memory.embedding import MiniLMEmbedder

    n, dim, queries = (500, 384, 20) if quick else (3000, 384, 50)
    rng = np.random.default_rng(7)
    mat = rng.standard_normal((n, dim)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    qs = [mat[i] + 0.1 * rng.standard_normal(dim).astype(np.float32) for i in range(queries)]
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        client = QdrantClient(path=str(Path(tmp) / "q"))
        client.create_collection(
            "b", vectors_config=models.VectorParams(size=dim, distance=models.Distance.DOT)
        )
        for s in range(0, n, 1000):
            client.upsert("b", points=models.Batch(ids=list(range(s, min(n, s + 1000))),
                                                   vectors=mat[s : s + 1000].tolist()))  # fmt: skip
        it = iter(range(10**9))
        local = _per_call(lambda: client.query_points("b", query=qs[next(it) % queries].tolist(),
                                                      limit=10), queries)  # fmt: skip
        it = iter(range(10**9))
        ref = _per_call(lambda: np.argpartition(-(mat @ qs[next(it) % queries]), 10)[:10], queries)
        client.close()
        rows.append((f"search, {n} x {dim}-d, top 10", f"{local * 1e3:.2f} ms",
                     f"{ref * 1e3:.2f} ms (numpy scan)", f"{local / ref:.1f}x"))  # fmt: skip

        chunks = _example_chunks()
        settings = load_settings(None, data_dir=Path(tmp) / "data", graph="bench")
        with (
            GraphStore.open(settings) as store,
            GraphIngestor(store, who="bench") as writer,  # vectors are written under its lease
            CodeIndex.open(settings) as index,
        ):
            t0 = time.perf_counter()
            index.sync("shop", chunks, guard=writer.check_lease)  # type: ignore[arg-type]
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            again = index.sync("shop", chunks, guard=writer.check_lease)  # type: ignore[arg-type]
            second = time.perf_counter() - t0
        assert again.embedded == 0
        rows.append((f"re-ingest of {len(chunks)} unchanged chunks", f"{second * 1e3:.1f} ms",
                     f"{first * 1e3:.0f} ms (first sync)", f"{second / first:.4f}x"))  # fmt: skip

        texts = [c.embed_text for c in chunks]  # type: ignore[attr-defined]
        short, full = MiniLMEmbedder(max_tokens=128), MiniLMEmbedder(max_tokens=256)
        t_short = _per_call(lambda: short.embed(texts), 1)
        t_full = _per_call(lambda: full.embed(texts), 1)
        rows.append((f"embed {len(texts)} chunks, 128 tokens", f"{t_short:.2f} s",
                     f"{t_full:.2f} s (256 tokens)", f"{t_short / t_full:.2f}x"))  # fmt: skip
    lines = [
        "## Code index (`python -m stackgraph.bench --only code_index`)",
        "",
        "| measure | value | reference (same run) | ratio |",
        "|---|---|---|---|",
        *[f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows],
    ]
    return "\n".join(lines) + "\n"
