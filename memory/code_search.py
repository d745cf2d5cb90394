"""Code ↔ graph: code-search hits with their owning Service, and a service's code.

`search_code` asks the code index by meaning, then the graph which Service each hit's
CodeUnit implements (the graph is the authority; the chunk's own record is the fallback
when the graph does not know the file yet). `code_refs` goes the other way.
"""

from __future__ import annotations

from typing import Any

from stackgraph import cypher
from stackgraph.store import GraphStore

from .code_index import CodeIndex

__all__ = ["REFS_LIMIT", "code_refs", "search_code"]

REFS_LIMIT = 500


def search_code(
    index: CodeIndex, store: GraphStore | None, text: str, limit: int = 10,
    service: str | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """`[{"service", "path", "symbol", "score", ...}]`, best first."""
    hits = index.search(text, limit=limit, service=service)
    owners: dict[tuple[str, str], dict[str, Any]] = {}
    if store is not None and hits:
        units = [{"repo": h.repo, "path": h.path} for h in hits]
        for row in store.read(cypher.load("code_owners"), {"units": units}):
            owners[(row["repo"], row["path"])] = row
    out: list[dict[str, Any]] = []
    for h in hits:
        row = h.as_dict()
        owner = owners.get((h.repo, h.path))
        row["service"] = owner["service"] if owner else h.service
        row["in_graph"] = owner is not None
        if owner and owner.get("criticality"):
            row["criticality"] = owner["criticality"]
        out.append(row)
    return out


def code_refs(store: GraphStore, service: str, limit: int = REFS_LIMIT) -> list[dict[str, Any]]:
    """The service's CodeUnits with their endpoints, subjects, calls and datastores."""
    rows = store.read(cypher.load("code_refs"), {"service": service, "limit": limit})
    out: list[dict[str, Any]] = []
    for r in rows:
        out.append(
            {
                "repo": r["repo"], "path": r["path"], "url": r.get("url"),
                "status": r.get("status"),
                **{k: sorted(r.get(k) or []) for k in
                   ("endpoints", "publishes", "consumes", "calls", "reads_from")},
            }
        )  # fmt: skip
    return out
