"""`open_memory`: the embedder plus the vector backend, checked against what is stored."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import SecretStr

from stackgraph.config import Settings
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
    qdrant_api_key: SecretStr | str | None = None,
    collection: str = "stackgraph_memory",
    ollama_host: str | None = None,
    embed_model: str = "bge-m3",
) -> Memory:
    """Pick the embedder (Ollama's `embed_model` when `ollama_host`, else offline MiniLM)
    and the vector store (Qdrant when `qdrant_url`, with its API key, else FalkorDB's HNSW
    index). Raises ConfigError at once when the stored dimension or model differs from
    the embedder's."""
    emb = embedder or default_embedder(ollama_host, embed_model)
    vectors: VectorBackend
    if qdrant_url:
        vectors = QdrantVectors.connect(qdrant_url, collection, emb.dim, emb.name, qdrant_api_key)
    else:
        vectors = FalkorVectors(store, emb.dim, emb.name)
    return Memory(store, emb, vectors)


def memory_for(settings: Settings, store: GraphStore) -> Memory:
    """The memory as the settings configure it: every command and the API open it so
    (`ollama_host` + `embed_model`, `qdrant_url` + `qdrant_api_key`, `memory_collection`)."""
    return open_memory(
        store,
        qdrant_url=settings.qdrant_url,
        qdrant_api_key=settings.qdrant_api_key,
        collection=settings.memory_collection,
        ollama_host=settings.ollama_host,
        embed_model=settings.embed_model,
    )
