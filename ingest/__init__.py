"""The single writer and its lanes."""

from .lanes import LANES, Lane, LaneInputs, register, resolve
from .lease import WriterLease, lease_key
from .writer import Counts, GraphIngestor, IngestReport, content_hash

__all__ = [
    "LANES",
    "Counts",
    "GraphIngestor",
    "IngestReport",
    "Lane",
    "LaneInputs",
    "WriterLease",
    "content_hash",
    "lease_key",
    "register",
    "resolve",
]
