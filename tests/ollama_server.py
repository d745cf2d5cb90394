"""Ollama's `/api/embed` for tests (no model server runs here): the real wire format,
deterministic vectors of a chosen size, and a record of the model each request named."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sgtest import serve_http


@dataclass
class FakeOllama:
    url: str
    models: list[str] = field(default_factory=list)
    """The `model` of every embed request, in order."""


@contextmanager
def ollama_server(dim: int = 1024) -> Iterator[FakeOllama]:
    fake = FakeOllama("")

    def embed(path: str, body: Any) -> tuple[int, Any]:
        fake.models.append(body["model"])
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vectors = [[0.01 * (i + 1)] * dim for i in range(len(texts))]
        return 200, {"model": body["model"], "embeddings": vectors}

    with serve_http(post=embed) as url:
        fake.url = url
        yield fake
