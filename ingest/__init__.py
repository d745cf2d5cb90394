"""The single writer and its lanes."""

from .lanes import LANES, Lane, LaneInputs, register, resolve
from .lease import WriterLease, lease_key
from .memory_writes import (
    VectorIndexInfo,
    check_dimension,
    check_vector,
    ensure_vector_index,
    expire_episode,
    vector_index,
    write_vectors,
)
from .report import Counts, IngestReport
from .rows import content_hash
from .run import Progress, run_lanes
from .writer import GraphIngestor

__all__ = [
    "LANES",
    "Counts",
    "GraphIngestor",
    "IngestReport",
    "Lane",
    "LaneInputs",
    "Progress",
    "VectorIndexInfo",
    "WriterLease",
    "check_dimension",
    "check_vector",
    "content_hash",
    "ensure_vector_index",
    "expire_episode",
    "lease_key",
    "register",
    "resolve",
    "run_lanes",
    "vector_index",
    "write_vectors",
]
