"""What one write did: created / updated / unchanged per label and edge type, and every
record refused (named with its field and origin)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stackgraph.schema import Rejection

__all__ = ["Counts", "IngestReport"]


@dataclass
class Counts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0

    @property
    def total(self) -> int:
        return self.created + self.updated + self.unchanged


@dataclass
class IngestReport:
    """Per-label and per-type outcome of one write, plus every refused record."""

    nodes: dict[str, Counts] = field(default_factory=lambda: defaultdict(Counts))
    edges: dict[str, Counts] = field(default_factory=lambda: defaultdict(Counts))
    rejected: list[Rejection] = field(default_factory=list)
    stale: dict[str, int] = field(default_factory=dict)
    """What lanes' post-write hooks flipped to Stale, per edge type or label."""

    def merge(self, other: IngestReport) -> None:
        for mine, theirs in ((self.nodes, other.nodes), (self.edges, other.edges)):
            for name, c in theirs.items():
                m = mine[name]
                m.created += c.created
                m.updated += c.updated
                m.unchanged += c.unchanged
        self.rejected.extend(other.rejected)
        self.add_stale(other.stale)

    def add_stale(self, counts: Mapping[str, int]) -> None:
        for name, n in counts.items():
            self.stale[name] = self.stale.get(name, 0) + int(n)

    def as_dict(self) -> dict[str, Any]:
        def table(d: Mapping[str, Counts]) -> dict[str, dict[str, int]]:
            return {
                k: {"created": c.created, "updated": c.updated, "unchanged": c.unchanged}
                for k, c in sorted(d.items())
            }

        out: dict[str, Any] = {
            "nodes": table(self.nodes),
            "edges": table(self.edges),
            "rejected": [str(r) for r in self.rejected],
        }
        if self.stale:
            out["stale"] = dict(sorted(self.stale.items()))
        return out
