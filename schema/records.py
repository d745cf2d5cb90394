"""Records crossing the lane → writer boundary."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .chunks import CodeChunk
from .model import Source, Status


def _fmt_key(key: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in key.items())


@dataclass(frozen=True)
class NodeRef:
    """A node named by its label and natural key."""

    label: str
    key: Mapping[str, Any]

    def __str__(self) -> str:
        return f"{self.label}{{{_fmt_key(self.key)}}}"


@dataclass(frozen=True)
class NodeRecord:
    """A node as a lane sees it: natural key, properties and provenance."""

    label: str
    key: Mapping[str, Any]
    props: Mapping[str, Any] = field(default_factory=dict)
    source: Source | str = Source.SYNTHETIC
    status: Status | str = Status.ACTIVE
    confidence: float = 1.0
    origin: str = ""
    """Where the record came from (file, document, line) for error messages."""

    @property
    def ref(self) -> NodeRef:
        return NodeRef(self.label, self.key)

    def __str__(self) -> str:
        return str(self.ref)


@dataclass(frozen=True)
class EdgeRecord:
    """A relationship between two nodes named by their natural keys."""

    type: str
    src: NodeRef
    dst: NodeRef
    props: Mapping[str, Any] = field(default_factory=dict)
    source: Source | str = Source.SYNTHETIC
    status: Status | str = Status.ACTIVE
    confidence: float = 1.0
    origin: str = ""

    def __str__(self) -> str:
        return f"({self.src})-[:{self.type}]->({self.dst})"


@dataclass(frozen=True)
class Rejection:
    """Why one record was not written; names the record, the field and the origin."""

    record: str
    field: str
    message: str
    origin: str = ""

    def __str__(self) -> str:
        where = f" [{self.origin}]" if self.origin else ""
        return f"{self.record}{where}: {self.field}: {self.message}"


@dataclass
class RecordBatch:
    """What one lane produced from one snapshot: records plus problems found on the way."""

    nodes: list[NodeRecord] = field(default_factory=list)
    edges: list[EdgeRecord] = field(default_factory=list)
    problems: list[Rejection] = field(default_factory=list)
    code_chunks: dict[str, list[CodeChunk]] = field(default_factory=dict)
    """Repo → every chunk the code index must hold for it (the code lane). The lane only
    finds them; the writer embeds and stores them under its lease."""

    def extend(self, other: RecordBatch) -> None:
        self.nodes.extend(other.nodes)
        self.edges.extend(other.edges)
        self.problems.extend(other.problems)
        for repo, chunks in other.code_chunks.items():
            self.code_chunks.setdefault(repo, []).extend(chunks)
