"""The vocabulary's shape: labels, edge types and provenance enums as plain data.

Everything that ends up as a label or relationship type in query text comes from
these specs, so the allow-lists are the specs themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Source(StrEnum):
    """Where a fact came from; LlmInferred never validates anything."""

    STATIC_CODE = "StaticCode"
    STATIC_INFRA = "StaticInfra"
    TEMPO = "Tempo"
    LOKI = "Loki"
    PROMETHEUS = "Prometheus"
    SYNTHETIC = "Synthetic"
    LLM_INFERRED = "LlmInferred"
    GIT = "Git"


class Status(StrEnum):
    ACTIVE = "Active"
    STALE = "Stale"
    CANDIDATE = "Candidate"
    DEPRECATED = "Deprecated"


PROVENANCE_FIELDS = ("source", "status", "confidence", "first_seen", "last_seen", "last_scan")
"""Properties the writer owns on every node and edge."""

VOLATILE_FIELDS = ("first_seen", "last_seen", "last_scan", "stale_at", "revived_at")
"""Timestamps left out of exports so two ingests of the same sources compare equal.
`stale_at` / `revived_at` list status transitions for time travel (frag_visible_at)."""

INTERNAL_PREFIX = "hash_"
"""Writer-owned content hashes, one per lane or source (`hash_catalog`, `hash_Tempo`, ...);
left out of exports."""


@dataclass(frozen=True)
class LabelSpec:
    """A node label: its natural key (the MERGE key) and what else it must carry."""

    name: str
    keys: tuple[str, ...]
    required: tuple[str, ...] = ()
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)
    fulltext: tuple[str, ...] = ()
    description: str = ""
    vector: tuple[str, ...] = ()
    """Vector-indexed properties; the dimension is pinned when the index is created."""
    indexed: tuple[str, ...] = ()
    """Range-indexed properties besides the key: a read path that selects on one (the
    services of a namespace) would otherwise scan every node of the label."""


@dataclass(frozen=True)
class EdgeSpec:
    """A relationship type and the labels allowed at each end."""

    name: str
    sources: tuple[str, ...]
    targets: tuple[str, ...]
    required: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    """Edge properties that tell parallel edges of this type apart (MERGE key)."""
    description: str = ""

    def allows(self, src_label: str, dst_label: str) -> bool:
        return src_label in self.sources and dst_label in self.targets
