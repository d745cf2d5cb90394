"""`memory_lookup`: the incident memory as an agent tool. A failed lookup is a result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stackgraph.errors import StackGraphError
from stackgraph.store import GraphStore

from .handle import Memory
from .retrieval import MemoryHit, search


@dataclass(frozen=True)
class MemoryLookup:
    """status: success (hits), no_data (nothing similar), error (message says why)."""

    status: str
    hits: list[MemoryHit] = field(default_factory=list)
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "message": self.message,
            "hits": [h.to_dict() for h in self.hits],
        }


def memory_lookup(
    store: GraphStore,
    query: str,
    *,
    memory: Memory | None = None,
    service: str | None = None,
    limit: int = 5,
    as_of: float | None = None,
    known_at: float | None = None,
) -> MemoryLookup:
    """Never raises for a store or memory problem: the agent records the failure."""
    if not query.strip():
        return MemoryLookup("error", message="query is empty")
    try:
        hits = search(
            store, query, memory=memory, service=service, limit=limit,
            as_of=as_of, known_at=known_at,
        )  # fmt: skip
    except (StackGraphError, ValueError) as exc:
        return MemoryLookup("error", message=f"memory lookup failed: {exc}")
    if not hits:
        return MemoryLookup("no_data", message="no similar incident in memory")
    top = hits[0]
    msg = f"{len(hits)} similar incident(s); best {top.incident} ({top.root_cause or '?'})"
    return MemoryLookup("success", hits, msg)
