"""The embedding dimension is pinned; a mismatch is refused at start-up, naming both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from qdrant_client import QdrantClient, models

from stackgraph.config import Settings
from stackgraph.errors import ConfigError, InputError
from stackgraph.ingest import GraphIngestor, ensure_vector_index, vector_index, write_vectors
from stackgraph.memory import (
    EntityRef,
    IncidentOutcome,
    Memory,
    QdrantVectors,
    offline_embedder,
    open_memory,
    record_episode,
    search,
)
from stackgraph.store import GraphStore


def test_falkordb_index_with_other_dimension_is_refused_at_open(store: GraphStore) -> None:
    with GraphIngestor(store) as writer:
        ensure_vector_index(writer, 8, "tiny-8d")
    info = vector_index(store)
    assert info is not None and info.dim == 8 and info.status == "OPERATIONAL"
    with pytest.raises(ConfigError) as exc:
        open_memory(store, offline_embedder())
    msg = str(exc.value)
    assert "8-d" in msg and "384-d" in msg and "all-minilm-l6-v2" in msg
    assert vector_index(store) == info  # nothing was re-created


def test_cli_start_up_fails_on_mismatch(store: GraphStore, settings: Settings) -> None:
    with GraphIngestor(store) as writer:
        ensure_vector_index(writer, 16, "other-16d")
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKGRAPH_")}
    env |= {"FALKORDB_URL": str(settings.falkordb_url), "STACKGRAPH_GRAPH": settings.graph,
            "STACKGRAPH_DATA_DIR": str(settings.data_dir)}  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "stackgraph", "memory", "search", "pods restarting", "--json"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout
    assert "pinned to 16-d" in proc.stderr and "makes 384-d" in proc.stderr


def test_writer_refuses_bad_vectors_before_writing(store: GraphStore, memory: Memory) -> None:
    outcome = IncidentOutcome("inc-1", "checkout", "pods restarting", 10.0)
    with GraphIngestor(store) as writer:
        record_episode(writer, outcome, memory)
        for vec, words in (
            ([0.1] * 383, "383 dimensions, the index 384"),
            ([float("nan")] + [0.1] * 383, "NaN"),
            ([0.0] * 384, "all zeros"),
        ):
            with pytest.raises(InputError, match=words):
                write_vectors(writer, [("inc-1", 1, vec)], 384, memory.embedder.name)
    # the stored embedding is untouched and still found
    (hit,) = search(store, "pods restarting", memory=memory, methods=["vector"])
    assert hit.incident == "inc-1"


def test_other_embedding_model_of_same_dimension_is_refused(
    store: GraphStore, memory: Memory
) -> None:
    with GraphIngestor(store) as writer:
        record_episode(writer, IncidentOutcome("i", "cart", "cache misses", 1.0), memory)

    class SameDimOtherModel:
        name = "some-other-384d-model"
        dim = 384

        def embed(self, texts: list[str]) -> np.ndarray:
            return offline_embedder().embed(texts)

    with pytest.raises(ConfigError, match="embedded with 'all-minilm-l6-v2'"):
        open_memory(store, SameDimOtherModel())


def test_qdrant_collection_dimension_is_pinned(store: GraphStore) -> None:
    client = QdrantClient(location=":memory:")  # qdrant-client's own local engine
    client.create_collection(
        "mem", vectors_config=models.VectorParams(size=1024, distance=models.Distance.COSINE)
    )
    with pytest.raises(ConfigError) as exc:
        QdrantVectors(client, "mem", 384, "all-minilm-l6-v2")
    assert "'mem' is pinned to 1024-d" in str(exc.value) and "384-d" in str(exc.value)
    assert client.get_collection("mem").config.params.vectors.size == 1024  # type: ignore[union-attr]


def test_qdrant_backend_serves_hybrid_search(store: GraphStore, tmp_path: Path) -> None:
    emb = offline_embedder()
    vectors = QdrantVectors(QdrantClient(location=":memory:"), "mem", emb.dim, emb.name)
    memory = Memory(store, emb, vectors)
    with GraphIngestor(store) as writer:
        for fp, sym in (("a", "checkout pods OOMKilled"), ("b", "DNS lookups fail NXDOMAIN")):
            record_episode(
                writer, IncidentOutcome(fp, "checkout", sym, 5.0, entities=[EntityRef(
                    "error", "oomkilled" if fp == "a" else "nxdomain")]), memory,
            )  # fmt: skip
    hits = search(store, "containers out of memory, OOMKilled", memory=memory)
    assert hits[0].incident == "a" and "vector" in hits[0].retrievers
    assert json.dumps([h.to_dict() for h in hits])
