"""Memory fixtures: the session's embedded FalkorDB, the real offline MiniLM embedder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from stackgraph.ingest import GraphIngestor
from stackgraph.memory import Memory, offline_embedder, open_memory
from stackgraph.store import GraphStore


class Clock:
    """A settable writer clock, so transaction times are exact in assertions."""

    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> Clock:
    return Clock(1000.0)


@pytest.fixture
def memory(store: GraphStore) -> Memory:
    return open_memory(store, offline_embedder())


@pytest.fixture
def writer(store: GraphStore, clock: Clock) -> Iterator[GraphIngestor]:
    with GraphIngestor(store, clock=clock, who="memory-test") as w:
        yield w
