"""`GET /api/v1/memory/search`: past incidents like a question, on both time axes."""

from __future__ import annotations

import logging
import re
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request, status
from pydantic import AfterValidator

from stackgraph.errors import StackGraphError
from stackgraph.inputs import NAME_PATTERN, SAFE_PATTERN, safe_text
from stackgraph.memory import MemoryHit, search

from ..deps import Authed, StoreDep
from ..schemas import Problem
from .common import AUTH_RESPONSES

log = logging.getLogger(__name__)

router = APIRouter(prefix="/api/v1/memory", tags=["memory"], dependencies=[Authed],
                   responses=AUTH_RESPONSES)  # fmt: skip

UNAVAILABLE: dict[int | str, dict[str, object]] = {
    503: {"model": Problem, "description": "The incident memory is not available."},
}
_TIME = "Epoch seconds or ISO-8601; default now."
TIME_SCHEMA: dict[str, Any] = {"anyOf": [
    {"type": "string", "format": "date-time"},
    {"type": "string", "pattern": "^[0-9]{1,11}([.][0-9]{1,9})?$"},
    {"type": "null"},
]}  # fmt: skip
"""What `_time` accepts, as the document says it."""


_EPOCH = re.compile(r"^[0-9]{1,11}([.][0-9]{1,9})?$")
_RFC3339 = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6})\d*)?([Zz]|[+-]\d{2}:\d{2})$"
)


def _epoch(value: str, what: str) -> float:
    """Epoch seconds from exactly what TIME_SCHEMA documents: epoch digits or RFC 3339."""
    if _EPOCH.match(value):
        return float(value)
    m = _RFC3339.match(value)
    if m is not None:
        date, clock, frac, zone = m.groups()
        text = f"{date}T{clock}{'.' + frac.ljust(6, '0') if frac else ''}"
        try:
            return datetime.fromisoformat(text + ("+00:00" if zone in "Zz" else zone)).timestamp()
        except (ValueError, OverflowError):
            pass
    raise ValueError(f"{what}: {value!r} is neither epoch seconds nor RFC 3339 "
                     "(2026-01-31T12:00:00Z)")  # fmt: skip


def _time(what: str) -> AfterValidator:
    """A query parameter that must parse as a time: a bad one is a plain 422."""

    def check(value: str | None) -> str | None:
        if value is not None:
            _epoch(value, what)
        return value

    return AfterValidator(check)


@router.get("/search", responses=UNAVAILABLE)
def memory_search(
    request: Request,
    store: StoreDep,
    q: Annotated[
        str,
        Query(
            min_length=1,
            max_length=2000,
            description="The question.",
            json_schema_extra={"pattern": SAFE_PATTERN},
        ),
        AfterValidator(safe_text),
    ],
    service: Annotated[
        str | None, Query(pattern=NAME_PATTERN, description="The alert's service.")
    ] = None,
    as_of: Annotated[
        str | None,
        Query(description="What was true then. " + _TIME, json_schema_extra=TIME_SCHEMA),
        _time("as_of"),
    ] = None,
    known_at: Annotated[
        str | None,
        Query(description="What was known then. " + _TIME, json_schema_extra=TIME_SCHEMA),
        _time("known_at"),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
) -> list[MemoryHit]:
    """Incidents like `q`, best first (hybrid: vector, BM25, graph proximity), each with
    `why` it matched. `as_of` asks what was true at that time, `known_at` what the memory
    held then."""
    memory = request.app.state.memory
    if memory is None:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, "memory not available")
    when = None if as_of is None else _epoch(as_of, "as_of")
    known = None if known_at is None else _epoch(known_at, "known_at")
    try:
        hits = search(store, q, memory=memory, service=service, as_of=when, known_at=known,
                      limit=limit)  # fmt: skip
    except (StackGraphError, ValueError) as exc:
        request.app.state.metrics.memory_failures.labels("search").inc()
        log.error("memory search failed: %s", exc)
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE,
                            f"memory search failed: {exc}") from exc  # fmt: skip
    return list(hits)  # the memory's own dataclass is the response model
