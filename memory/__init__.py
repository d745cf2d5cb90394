"""Bi-temporal incident memory, embeddings and hybrid retrieval."""

from .embedding import Embedder, MiniLMEmbedder, OllamaEmbedder, default_embedder, offline_embedder

__all__ = ["Embedder", "MiniLMEmbedder", "OllamaEmbedder", "default_embedder", "offline_embedder"]
