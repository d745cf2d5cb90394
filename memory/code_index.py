"""The code index: code chunks embedded in a Qdrant collection, searched by meaning.

`QDRANT_URL` selects a Qdrant server; otherwise qdrant-client's local mode keeps the
collection under `<data_dir>/code-index` (one process per folder at a time). Local mode
searches by brute force in numpy (COMPONENTS.md §3: ~40 ms at 10k × 1024-d). That is
fine here: a platform's code is hundreds to a few thousand chunks of 384-1024 dims, so a
scan costs a few ms and needs no index to build or keep. (Incident memory, which grows
without bound, uses another store.) Vectors are unit-normalised, so the collection uses
DOT, which ranks like COSINE without re-normalising the matrix on every query.

The embedder's name and dimension are pinned in the collection's metadata when it is
created. Opening it with another embedder is refused with both names and dimensions;
nothing is re-created silently.

Only the single writer writes here: `sync` takes the writer's lease check and calls it
before every create, upsert and delete (the code lane hands its chunks to the writer,
which syncs them after writing the lane's records). Opening and searching write nothing.

    with CodeIndex.open(settings) as index:
        index.sync("shop", chunks, guard=writer.check_lease)  # embeds new or changed chunks
        hits = index.search("charge the customer's card", limit=5)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from uuid import UUID

from pydantic import SecretStr

from stackgraph.config import Settings
from stackgraph.errors import ConfigError
from stackgraph.schema import CodeChunk

from .embedding import Embedder, MiniLMEmbedder, default_embedder
from .qdrant import QdrantError, connect_qdrant, qdrant_errors

__all__ = [
    "CodeHit",
    "CodeIndex",
    "CodeIndexError",
    "IndexReport",
    "code_embedder",
    "collection_name",
]

_BATCH = 32
CODE_TOKENS = 128
"""Tokens the offline model reads per chunk. Measured on the demo repo (40 chunks): 128
tokens embed 3.2x faster than 256 with the same top hits (name, signature and docstring
come first); `embed_text` puts them there."""


@cache
def _offline_code_embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder(max_tokens=CODE_TOKENS)


def code_embedder(settings: Settings) -> Embedder:
    """Ollama when `OLLAMA_HOST` is set, else the offline MiniLM reading 128 tokens."""
    if settings.ollama_host:
        return default_embedder(settings.ollama_host, settings.embed_model)
    return _offline_code_embedder()


class CodeIndexError(QdrantError):
    """The vector store failed or holds something we will not mix with."""


@dataclass(frozen=True)
class IndexReport:
    embedded: int = 0
    unchanged: int = 0
    deleted: int = 0

    def __str__(self) -> str:
        return f"embedded {self.embedded}, unchanged {self.unchanged}, deleted {self.deleted}"


@dataclass(frozen=True)
class CodeHit:
    service: str
    repo: str
    path: str
    symbol: str
    kind: str
    start_line: int
    score: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "service": self.service, "repo": self.repo, "path": self.path,
            "symbol": self.symbol, "kind": self.kind, "line": self.start_line,
            "score": round(self.score, 4),
        }  # fmt: skip


def collection_name(settings: Settings) -> str:
    return settings.code_collection or f"{settings.graph}_code"


def local_path(settings: Settings) -> Path:
    return settings.data_dir / "code-index"


class CodeIndex:
    """One Qdrant collection of code chunks, pinned to one embedder."""

    def __init__(
        self, client: Any, collection: str, embedder: Embedder, where: str,
        api_key: SecretStr | None = None,
    ) -> None:  # fmt: skip
        self.client = client
        self.collection = collection
        self.embedder = embedder
        self.where = where
        self._api_key = api_key
        """Only to scrub it from errors."""

    @classmethod
    def open(cls, settings: Settings, embedder: Embedder | None = None) -> CodeIndex:
        """Connect and refuse a dimension/embedder mismatch with a stored collection."""
        from qdrant_client import QdrantClient

        embedder = embedder or code_embedder(settings)
        if settings.qdrant_url:
            client, where = connect_qdrant(settings.qdrant_url, settings.qdrant_api_key)
        else:
            path = local_path(settings)
            where = f"local Qdrant in {path}"
            try:
                path.mkdir(parents=True, exist_ok=True)
                client = QdrantClient(path=str(path))
            except RuntimeError as exc:  # another process holds the folder
                raise CodeIndexError(f"{where} is in use by another process: {exc}") from None
            except OSError as exc:
                raise CodeIndexError(f"{where} cannot be opened: {exc.strerror}") from None
        index = cls(client, collection_name(settings), embedder, where, settings.qdrant_api_key)
        try:
            with index._translate("opening the collection"):
                index._check_collection()
        except BaseException:
            index.close()
            raise
        return index

    @classmethod
    def check(cls, settings: Settings, embedder: Embedder | None = None) -> None:
        """Refuse a mismatch now, writing nothing (the code lane, before any work)."""
        cls.open(settings, embedder).close()

    def _create_collection(self) -> None:
        from qdrant_client import models

        dim = self.embedder.dim
        self.client.create_collection(
            self.collection,
            vectors_config=models.VectorParams(size=dim, distance=models.Distance.DOT),
            metadata={"embedder": self.embedder.name, "dim": dim, "kind": "code"},
        )

    def _check_collection(self) -> None:
        name, dim = self.collection, self.embedder.dim
        if not self.client.collection_exists(name):
            return
        info = self.client.get_collection(name)
        vectors = info.config.params.vectors
        have = getattr(vectors, "size", None)
        meta = info.config.metadata or {}
        pinned = meta.get("embedder", "unknown")
        if have != dim:
            raise ConfigError(
                f"code index collection {name!r} ({self.where}) holds {have}-d vectors from "
                f"embedder {pinned!r}, but the configured embedder {self.embedder.name!r} makes "
                f"{dim}-d vectors; refusing to mix them. Use the embedder the collection was "
                f"built with, or set code_collection to a new name to re-index"
            )
        if meta and pinned != self.embedder.name:
            raise ConfigError(
                f"code index collection {name!r} ({self.where}) was built with embedder "
                f"{pinned!r} ({have}-d); the configured embedder {self.embedder.name!r} is "
                f"also {dim}-d but its vectors are not comparable; set code_collection to a "
                f"new name to re-index"
            )

    def _translate(self, what: str) -> AbstractContextManager[None]:
        """Qdrant's errors (server or local) become one-line CodeIndexErrors, scrubbed."""
        where, key = self.where, self._api_key
        return qdrant_errors(where, f"{what} ({self.collection!r})", key, CodeIndexError)

    # -- writing -----------------------------------------------------------------------

    def _existing(self, repo: str) -> dict[str, str]:
        """point id → text hash of every chunk stored for `repo`."""
        from qdrant_client import models

        if not self.client.collection_exists(self.collection):
            return {}
        flt = models.Filter(
            must=[models.FieldCondition(key="repo", match=models.MatchValue(value=repo))]
        )
        out: dict[str, str] = {}
        offset: Any = None
        while True:
            points, offset = self.client.scroll(
                self.collection, scroll_filter=flt, limit=1000, offset=offset,
                with_payload=["hash"], with_vectors=False,
            )  # fmt: skip
            for p in points:
                out[str(p.id)] = str((p.payload or {}).get("hash", ""))
            if offset is None:
                return out

    def sync(
        self, repo: str, chunks: Sequence[CodeChunk], *, guard: Callable[[], None]
    ) -> IndexReport:
        """Make the repo's stored chunks equal `chunks`: embed new or changed text only,
        delete chunks that are gone. `guard` is the writer's lease check, called before
        every write (it raises when the lease is lost: nothing more is written)."""
        with self._translate("sync"):
            return self._sync(repo, chunks, guard)

    def _sync(
        self, repo: str, chunks: Sequence[CodeChunk], guard: Callable[[], None]
    ) -> IndexReport:
        from qdrant_client import models

        have = self._existing(repo)
        wanted = {c.point_id: c for c in chunks}
        todo = [c for pid, c in wanted.items() if have.get(pid) != c.text_hash]
        todo.sort(key=lambda c: len(c.embed_text))  # batches of like length pad less
        if todo and not self.client.collection_exists(self.collection):
            guard()
            self._create_collection()
        for start in range(0, len(todo), _BATCH):
            part = todo[start : start + _BATCH]
            vectors = self.embedder.embed([c.embed_text for c in part])
            guard()
            self.client.upsert(
                self.collection,
                points=models.Batch(
                    ids=[c.point_id for c in part],
                    vectors=[v.tolist() for v in vectors],
                    payloads=[_payload(c) for c in part],
                ),
            )
        gone: list[int | str | UUID] = sorted(set(have) - set(wanted))
        if gone:
            guard()
            self.client.delete(self.collection, points_selector=models.PointIdsList(points=gone))
        return IndexReport(len(todo), len(wanted) - len(todo), len(gone))

    # -- reading -----------------------------------------------------------------------

    def search(self, text: str, limit: int = 10, service: str | None = None) -> list[CodeHit]:
        """Chunks nearest in meaning to `text`, best first."""
        from qdrant_client import models

        limit = max(1, min(limit, 100))
        vector = self.embedder.embed([text])[0].tolist()
        flt = None
        if service:
            cond = models.FieldCondition(key="service", match=models.MatchValue(value=service))
            flt = models.Filter(must=[cond])
        with self._translate("search"):
            if not self.client.collection_exists(self.collection):
                return []
            points = self.client.query_points(
                self.collection, query=vector, query_filter=flt, limit=limit, with_payload=True
            ).points
        hits: list[CodeHit] = []
        for p in points:
            pl = p.payload or {}
            hits.append(
                CodeHit(
                    str(pl.get("service", "")), str(pl.get("repo", "")), str(pl.get("path", "")),
                    str(pl.get("symbol", "")), str(pl.get("kind", "")),
                    int(pl.get("start_line", 0)), float(p.score),
                )
            )  # fmt: skip
        return hits

    def count(self) -> int:
        with self._translate("count"):
            if not self.client.collection_exists(self.collection):
                return 0
            return int(self.client.count(self.collection).count)

    def close(self) -> None:
        close = getattr(self.client, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> CodeIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _payload(c: CodeChunk) -> dict[str, Any]:
    return {
        "repo": c.repo, "path": c.path, "service": c.service, "symbol": c.symbol,
        "kind": c.kind, "start_line": c.start_line, "end_line": c.end_line, "hash": c.text_hash,
    }  # fmt: skip
