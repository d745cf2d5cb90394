"""Knowledge and trajectories in the world-model: read through the read port, written as
records through the writer.

    Knowledge{name: live, version}          the version in use
    KnowledgeVersion{version}               every version ever made: items, parent, the
                                            proposal behind it and the gates it passed

Nothing is deleted: a promotion and a revert each add a version and move `live`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from stackgraph import cypher
from stackgraph.errors import InputError, StackGraphError
from stackgraph.rca.agent import OutcomeHistory
from stackgraph.schema import NodeRecord, RecordBatch
from stackgraph.store import GraphReader

from .items import Knowledge, shipped
from .trajectory import Trajectory

__all__ = [
    "LIVE",
    "TTL_S",
    "LiveKnowledge",
    "live",
    "outcome_history",
    "promotion_records",
    "trajectories",
    "version",
    "versions",
]

LIVE = "live"
SOURCE = "Synthetic"
TTL_S = 30.0
"""How long a read of the live knowledge serves: a promotion is in effect within it."""
HISTORY = 1000
"""The newest this many conclusions with feedback calibrate a stated confidence: a bound on
one read (a platform changes; its recent outcomes say more than its first)."""


def _knowledge(rows: list[dict[str, Any]]) -> Knowledge | None:
    if not rows or not rows[0].get("knowledge"):
        return None
    return Knowledge.from_dict(json.loads(rows[0]["knowledge"]))


def live(store: GraphReader) -> Knowledge:
    """The knowledge in use: the live version, or the shipped one when none was promoted
    (or the graph cannot be read: knowledge orders and hints, it never decides)."""
    try:
        found = _knowledge(store.read(cypher.load("knowledge_live"), {"name": LIVE}))
    except StackGraphError:
        found = None
    return found or shipped()


class LiveKnowledge:
    """`live(store)`, kept for TTL_S per graph: what every plan and agent run consults,
    without a read per investigation."""

    def __init__(self, ttl_s: float = TTL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s, self.clock = ttl_s, clock
        self._seen: dict[str, tuple[float, Knowledge]] = {}

    def __call__(self, store: GraphReader) -> Knowledge:
        now = self.clock()
        got = self._seen.get(store.graph_name)
        if got is None or now - got[0] > self.ttl_s:
            got = (now, live(store))
            self._seen[store.graph_name] = got
        return got[1]


def version(store: GraphReader, number: int) -> Knowledge:
    if number == 0:
        return shipped()
    found = _knowledge(store.read(cypher.load("knowledge_version"), {"version": int(number)}))
    if found is None:
        raise InputError(f"no knowledge version {number} (see `stackgraph knowledge list`)")
    return found


def versions(store: GraphReader) -> list[dict[str, Any]]:
    """Every stored version, newest first; version 0 (shipped) last."""
    rows = store.read(cypher.load("knowledge_versions"), {"name": LIVE})
    zero = shipped()
    return [*rows, {"version": 0, "parent": None, "note": zero.note, "digest": zero.digest,
                    "items": len(zero.items), "created": None,
                    "live": not any(r.get("live") for r in rows)}]  # fmt: skip


def promotion_records(k: Knowledge) -> RecordBatch:
    """Write `k` as a new version and make it live."""
    batch = RecordBatch()
    batch.nodes.append(NodeRecord("KnowledgeVersion", {"version": k.version}, {
        "parent": k.parent if k.parent is not None else -1, "note": k.note[:2000],
        "digest": k.digest, "items": len(k.items),
        "knowledge_json": json.dumps(k.to_dict(), sort_keys=True, default=str),
    }, SOURCE))  # fmt: skip
    batch.nodes.append(NodeRecord("Knowledge", {"name": LIVE}, {"version": k.version}, SOURCE))
    return batch


def trajectories(
    store: GraphReader, since: float = 0.0, limit: int = 10_000
) -> Iterator[Trajectory]:
    """Stored trajectories opened since `since`, oldest first."""
    rows = store.read(cypher.load("trajectories"), {"since": float(since), "limit": int(limit)})
    for r in rows:
        if r.get("trajectory"):
            yield Trajectory.from_dict(json.loads(r["trajectory"]))


def outcome_history(store: GraphReader, limit: int = HISTORY) -> OutcomeHistory:
    """Earlier conclusions with feedback (the evidence's state and confidence, confirmed or
    not): what calibrates the confidence an incident states. Empty when the graph cannot be
    read: calibration informs what the report says, it never decides. A conclusion stored
    before its state was (`evidence_state`) calibrates none of today's."""
    try:
        labels = ["correct", "partial", "wrong"]
        rows = store.read(cypher.load("trajectory_outcomes"), {"labels": labels, "limit": limit})
    except StackGraphError:
        return OutcomeHistory()
    return OutcomeHistory.of(
        (str(r.get("state") or ""), float(r["confidence"]), r.get("label") == "correct")
        for r in rows
        if r.get("confidence") is not None
    )
