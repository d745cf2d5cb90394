"""Where episode embeddings live, and the start-up check that pins their dimension.

Two backends behind one small protocol:

- `FalkorVectors` (the embedded default): FalkorDB's native HNSW index on
  `MemoryEpisode.embedding`, in the same graph as the episodes. Chosen over qdrant-client's
  local mode because that mode is a brute-force numpy scan (~40 ms per search at
  10k x 1024-d, one process per folder), which alone would blow the 30 ms P95 budget; the
  HNSW query is ~1 ms and needs no second store to keep in step.
- `QdrantVectors` (production, `QDRANT_URL` + `QDRANT_API_KEY`): a Qdrant collection whose
  vector size is the pinned dimension; point ids derive from (fingerprint, version). Its
  errors are `QdrantError`s that name the redacted URL and never the key.

Both refuse an embedder of another dimension when opened, naming both, and never
re-create a collection or index silently.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

import numpy as np
from pydantic import SecretStr

from stackgraph import cypher
from stackgraph.errors import ConfigError
from stackgraph.ingest import (
    GraphIngestor,
    check_dimension,
    ensure_vector_index,
    vector_index,
    write_vectors,
)
from stackgraph.store import GraphStore

from .qdrant import QdrantError, connect_qdrant, qdrant_errors

VectorHit = tuple[str, int, float]
"""(incident fingerprint, version, cosine similarity)."""
VectorRow = tuple[str, int, Sequence[float] | np.ndarray]
"""(incident fingerprint, version, embedding)."""


class VectorBackend(Protocol):
    """Stores and searches episode embeddings of one pinned dimension."""

    name: str
    dim: int

    def prepare(self, writer: GraphIngestor) -> None:
        """Create the index/collection if absent (writer side, under the lease)."""
        ...

    def add(self, writer: GraphIngestor, rows: Sequence[VectorRow]) -> None: ...

    def query(self, vector: np.ndarray, k: int) -> list[VectorHit]: ...


class FalkorVectors:
    """HNSW vectors in the graph itself; writes go through the single writer."""

    name = "falkordb-hnsw"

    def __init__(self, store: GraphStore, dim: int, model: str) -> None:
        self.store = store
        self.dim = dim
        self.model = model
        self._ready = False
        check_dimension(store, dim, model)

    def prepare(self, writer: GraphIngestor) -> None:
        ensure_vector_index(writer, self.dim, self.model)
        self._ready = True

    def add(self, writer: GraphIngestor, rows: Sequence[VectorRow]) -> None:
        if not self._ready:
            self.prepare(writer)
        write_vectors(writer, rows, self.dim, self.model)

    def query(self, vector: np.ndarray, k: int) -> list[VectorHit]:
        if not self._ready:
            # queryNodes fails with a misleading message when there is no index yet
            info = vector_index(self.store)
            if info is None or info.status.upper() != "OPERATIONAL":
                return []
            self._ready = True
        rows = self.store.read(
            cypher.load("memory_vector_query"),
            {"k": int(k), "vector": [float(x) for x in vector]},
        )
        return [(r["fp"], int(r["version"]), float(r["similarity"])) for r in rows]


def point_id(fingerprint: str, version: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"stackgraph-memory:{fingerprint}#{version}"))


class QdrantVectors:
    """A Qdrant collection (server, or qdrant-client local mode in tests)."""

    name = "qdrant"

    def __init__(
        self, client: Any, collection: str, dim: int, model: str, where: str = "Qdrant",
        api_key: SecretStr | str | None = None,
    ) -> None:  # fmt: skip
        self.client = client
        self.collection = collection
        self.dim = dim
        self.model = model
        self.where = where
        self._api_key = api_key
        """Only to scrub it from errors."""
        with self._errors("opening the collection"):
            exists = client.collection_exists(collection)
            have = _qdrant_size(client.get_collection(collection)) if exists else dim
        if have != dim:
            raise ConfigError(
                f"Qdrant collection {collection!r} is pinned to {have}-d vectors but the "
                f"embedder {model!r} makes {dim}-d vectors; use the embedder the memory "
                "was built with, or point memory_collection at a new collection"
            )

    @classmethod
    def connect(
        cls, url: str, collection: str, dim: int, model: str,
        api_key: SecretStr | str | None = None,
    ) -> QdrantVectors:  # fmt: skip
        """A collection on the server at `url`, sending `api_key`; an unreachable server
        is a ConfigError naming the redacted URL."""
        client, where = connect_qdrant(url, api_key, timeout=10)
        try:
            return cls(client, collection, dim, model, where, api_key)
        except QdrantError as exc:
            raise ConfigError(f"cannot use {exc}") from None

    def _errors(self, what: str) -> AbstractContextManager[None]:
        return qdrant_errors(self.where, f"{what} ({self.collection!r})", self._api_key)

    def prepare(self, writer: GraphIngestor) -> None:
        from qdrant_client import models

        writer.check_lease()
        with self._errors("creating the collection"):
            if not self.client.collection_exists(self.collection):
                # COSINE: Qdrant normalises on insert, so scores are cosine similarity
                params = models.VectorParams(size=self.dim, distance=models.Distance.COSINE)
                self.client.create_collection(self.collection, vectors_config=params)

    def add(self, writer: GraphIngestor, rows: Sequence[VectorRow]) -> None:
        from qdrant_client import models

        from stackgraph.ingest import check_vector

        self.prepare(writer)
        points = [
            models.PointStruct(
                id=point_id(fp, v),
                vector=check_vector(f"MemoryEpisode {fp}#{v}", vec, self.dim),
                payload={"fp": fp, "version": int(v), "model": self.model},
            )
            for fp, v, vec in rows
        ]
        if points:
            writer.check_lease()
            with self._errors("upsert"):
                self.client.upsert(self.collection, points=points)

    def query(self, vector: np.ndarray, k: int) -> list[VectorHit]:
        with self._errors("search"):
            if not self.client.collection_exists(self.collection):
                return []
            res = self.client.query_points(
                self.collection, query=[float(x) for x in vector], limit=int(k),
                with_payload=True,
            )  # fmt: skip
        return [
            (str(p.payload["fp"]), int(p.payload["version"]), float(p.score))
            for p in res.points
            if p.payload
        ]


def _qdrant_size(info: Any) -> int:
    vectors = info.config.params.vectors
    if isinstance(vectors, dict):  # named vectors: ours is the unnamed default
        vectors = vectors.get("") or next(iter(vectors.values()))
    return int(vectors.size)
