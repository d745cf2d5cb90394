"""Time travel over the whole world-model: the graph as it was at a past moment.

What is kept (by the writer's templates, nothing is deleted):
- `first_seen`: set when a node/edge is created, never changed;
- `stale_at`: a list, one entry each time `mark_stale` flipped the fact to Stale;
- `revived_at`: a list, one entry each time a Stale fact was seen again (back to Active).

A fact is visible at `at` iff `first_seen <= at` and it had gone stale as often as it had
come back by then (frag_visible_at.cypher). Templates say `WHERE <<visible_at:n>>` and
bind `$at` (null: now, no filter), so the read path runs the same queries live or in the
past. Property values (error rates, replicas) are the latest written: time travel answers
which facts existed, not what their measurements were then.
"""

from __future__ import annotations

from typing import Any

from stackgraph import cypher

from .store import GraphStore


def at_params(at: float | None) -> dict[str, Any]:
    """The parameter every `<<visible_at:x>>` predicate reads."""
    return {"at": None if at is None else float(at)}


def visible_nodes(
    store: GraphStore, label: str, at: float | None, limit: int = 10_000
) -> list[dict[str, Any]]:
    """Properties of the `label` nodes the graph held at `at`."""
    rows = store.read(cypher.render("asof_nodes", label=label), {**at_params(at), "limit": limit})
    return [r["p"] for r in rows]


def neighbours_at(
    store: GraphStore, service: str, at: float | None, limit: int = 1000
) -> list[tuple[str, str, str]]:
    """(edge type, label, name) of a service's direct neighbours at `at`."""
    rows = store.read(
        cypher.load("asof_neighbours"), {**at_params(at), "service": service, "limit": limit}
    )
    return [(r["type"], r["label"], r["name"]) for r in rows]
