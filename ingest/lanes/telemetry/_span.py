"""The part of a span the service graph needs, whatever format it came in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["Span"]


@dataclass(frozen=True)
class Span:
    """The part of a span the service graph needs."""

    trace_id: str
    span_id: str
    parent_id: str
    service: str
    kind: str
    """client, server, producer, consumer, internal or ""."""
    duration_ms: float
    end_s: float = 0.0
    error: bool = False
    attributes: Mapping[str, str] = field(default_factory=dict)
    status_recorded: bool = True
    """False where the source has no status at all (a CSV without a status column): `error`
    is then no measurement, and the lane writes no error rate from it."""
