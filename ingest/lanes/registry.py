"""Lanes register by name; `stackgraph ingest --lanes a,b` runs them in the given order.

A lane reads its source (files, an API) into a snapshot and turns it into records with a
pure function; it never writes. The writer writes what it returns. A lane may also name an
`after_write` hook, run with the writer after its records were written (and only then): the
telemetry lane flips edges it no longer sees to Stale there, the code lane stores its chunks
in the code index.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stackgraph.config import Settings
from stackgraph.errors import InputError
from stackgraph.schema import RecordBatch
from stackgraph.store import GraphReader

if TYPE_CHECKING:
    from stackgraph.ingest.writer import GraphIngestor


@dataclass(frozen=True)
class LaneInputs:
    """What a run of lanes may read: paths from the CLI or config, and the settings."""

    settings: Settings
    catalog: Path | None = None
    manifests: Path | None = None
    repos: tuple[Path, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    graph: GraphReader | None = None
    """The graph as lanes before this one left it, when a store is open: the read-only
    port, a type with no write method (watermarks, known names)."""


AfterWrite = Callable[["GraphIngestor", LaneInputs, RecordBatch], Mapping[str, int]]
"""A post-write hook: gets the writer (lease held), the inputs and the lane's batch (what
`write` cannot take: the code lane's chunks); returns counts by name (e.g. edges marked
Stale per type) for the report."""


@dataclass(frozen=True)
class Lane:
    name: str
    description: str
    collect: Callable[[LaneInputs], RecordBatch]
    after_write: AfterWrite | None = None


LANES: dict[str, Lane] = {}


def register(
    name: str, description: str, after_write: AfterWrite | None = None
) -> Callable[[Callable[[LaneInputs], RecordBatch]], Lane]:
    def deco(fn: Callable[[LaneInputs], RecordBatch]) -> Lane:
        lane = Lane(name, description, fn, after_write)
        LANES[name] = lane
        return lane

    return deco


def resolve(names: str) -> list[Lane]:
    """Parse `a,b` into lanes, in order; unknown names are an error naming the choices."""
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    if not wanted:
        raise InputError("no lanes given")
    unknown = [n for n in wanted if n not in LANES]
    if unknown:
        raise InputError(f"unknown lane(s) {', '.join(unknown)}; known: {', '.join(sorted(LANES))}")
    return [LANES[n] for n in dict.fromkeys(wanted)]
