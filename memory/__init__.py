"""Bi-temporal incident memory, embeddings and hybrid retrieval.

with GraphStore.open(settings) as store, GraphIngestor(store) as writer:
    memory = open_memory(store)                     # refuses a mismatched dimension
    record_episode(writer, outcome, memory)
    supersede(writer, corrected, memory, kind="correction", reason="feedback")
hits = search(store, "checkout pods OOMKilled", service="checkout", memory=memory)
"""

from .embedding import Embedder, MiniLMEmbedder, OllamaEmbedder, default_embedder, offline_embedder
from .episodes import (
    EntityRef,
    EpisodeVersion,
    IncidentOutcome,
    current_version,
    record_episode,
    supersede,
    versions,
)
from .handle import Memory, memory_for, open_memory
from .lexical import LexicalIndex
from .retrieval import METHODS, MemoryHit, search
from .tool import MemoryLookup, memory_lookup
from .vectors import FalkorVectors, QdrantVectors, VectorBackend

__all__ = [
    "METHODS",
    "Embedder",
    "EntityRef",
    "EpisodeVersion",
    "FalkorVectors",
    "IncidentOutcome",
    "LexicalIndex",
    "Memory",
    "MemoryHit",
    "MemoryLookup",
    "MiniLMEmbedder",
    "OllamaEmbedder",
    "QdrantVectors",
    "VectorBackend",
    "current_version",
    "default_embedder",
    "memory_for",
    "memory_lookup",
    "offline_embedder",
    "open_memory",
    "record_episode",
    "search",
    "supersede",
    "versions",
]
