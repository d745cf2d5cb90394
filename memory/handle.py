"""`open_memory`: the embedder plus the vector backend, checked against what is stored."""

from __future__ import annotations

from dataclasses import dataclass, field

from stackgraph.store import GraphStore

from .embedding import Embedder, default_embedder
from .lexical import LexicalIndex
from .vectors import FalkorVectors, QdrantVectors, VectorBackend


@dataclass
class Memory:
    """What reads and writes of the incident memory need besides the graph store."""

    store: GraphStore
    embedder: Embedder
    vectors: VectorBackend
    lexical: LexicalIndex = field(default_factory=LexicalIndex)
    """In-process BM25, rebuilt when episode versions were added; keep the Memory around."""


def open_memory(
    store: GraphStore,
    embedder: Embedder | None = None,
    *,
    qdrant_url: str | None = None,
    collection: str = "stackgraph_memory",
    ollama_host: str | None = None,
) -> Memory:
    """Pick the embedder (Ollama when configured, else offline MiniLM) and the vector store
    (Qdrant when `qdrant_url`, else FalkorDB's HNSW index). Raises ConfigError at once when
    the stored dimension or model differs from the embedder's."""
    emb = embedder or default_embedder(ollama_host)
    vectors: VectorBackend
    field(default_factory=LexicalIndex)
    """In-process BM25, rebuilt when episode versions were added; keep the Memory around."""
    if qdrant_url:
        vectors = QdrantVectors.connect(qdrant_url, collection, emb.dim, emb.name)
    else:
        vectors = FalkorVectors(store, emb.dim, emb.name)
    return Memory(store, emb, vectors)
