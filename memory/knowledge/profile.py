"""K1: the system profile, derived from the world-model (not learned, so not gated): the
services by tier, their datastores, the hot paths (most traffic) and which signals the
calls into each service carry. `evolve` refreshes it into the knowledge when it changed."""

from __future__ import annotations

from collections import defaultdict

from stackgraph import cypher
from stackgraph.store import GraphReader

from .items import Item

__all__ = ["HOT", "profile_items"]

HOT = 5
"""Services named as the hot paths: the busiest few, as an operator would list them."""
LIMIT = 500


def profile_items(store: GraphReader) -> list[Item]:
    rows = store.read(cypher.load("knowledge_profile"), {"limit": LIMIT})
    if not rows:
        return []
    tiers: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        tiers[str(r.get("criticality") or "unknown")].append(str(r["service"]))
    stores = {str(r["service"]): [str(d) for d in r.get("datastores") or ()] for r in rows}
    hot = [f"{r['service']} ({int(r['traffic'] or 0)} calls)" for r in rows[:HOT] if r["traffic"]]
    blind = [str(r["service"]) for r in rows if r["callers"] and not r["has_errors"]]
    provenance = {"source": "world-model", "services": len(rows)}
    items = [
        Item("K1:profile:tiers", "profile", "services by tier: " + "; ".join(
            f"{t}: {', '.join(sorted(s))}" for t, s in sorted(tiers.items())),
            provenance=provenance),
        Item("K1:profile:datastores", "profile", "datastores: " + "; ".join(
            f"{s} reads {', '.join(d)}" for s, d in sorted(stores.items()) if d) or
            "datastores: none known", provenance=provenance),
        Item("K1:profile:hot", "profile", "hot paths (most traffic): " + (", ".join(hot) or
             "no call traffic known"), provenance=provenance),
        Item("K1:profile:signals", "profile", "calls without an error signal: " + (
            ", ".join(sorted(blind)) or "none"), provenance=provenance),
    ]  # fmt: skip
    return items
