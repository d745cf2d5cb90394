"""`GET /api/v1/memory/search`: past incidents like a question, on both time axes."""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request, status

from stackgraph.errors import InputError, StackGraphError
from stackgraph.memory import MemoryHit, search
from stackgraph.timetravel import parse_time

from ..deps import Authed, StoreDep
from ..schemas import NAME_PATTERN, Problem
from .common import AUTH_RESPONSES

log = logging.getLogger(__name__)

router = APIRouter(prefix="/api/v1/memory", tags=["memory"], dependencies=[Authed],
                   responses=AUTH_RESPONSES)  # fmt: skip

UNAVAILABLE: dict[int | str, dict[str, object]] = {
    503: {"model": Problem, "description": "The incident memory is not available."},
    422: {"model": Problem, "description": "A time is neither epoch seconds nor ISO-8601."},
}
_TIME = "Epoch seconds or ISO-8601; default now."


def _time(value: str | None, name: str) -> float | None:
    if value is None:
        return None
    try:
        return parse_time(value, name)
    except InputError as exc:
        raise HTTPException(422, str(exc)) from exc


@router.get("/search", responses=UNAVAILABLE)
def memory_search(
    request: Request,
    store: StoreDep,
    q: Annotated[str, Query(min_length=1, max_length=2000, description="The question.")],
    service: Annotated[
        str | None, Query(pattern=NAME_PATTERN, description="The alert's service.")
    ] = None,
    as_of: Annotated[str | None, Query(description="What was true then. " + _TIME)] = None,
    known_at: Annotated[str | None, Query(description="What was known then. " + _TIME)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
) -> list[MemoryHit]:
    """Incidents like `q`, best first (hybrid: vector, BM25, graph proximity), each with
    `why` it matched. `as_of` asks what was true at that time, `known_at` what the memory
    held then."""
    memory = request.app.state.memory
    if memory is None:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, "memory not available")
    when, known = _time(as_of, "as_of"), _time(known_at, "known_at")
    try:
        hits = search(store, q, memory=memory, service=service, as_of=when, known_at=known,
                      limit=limit)  # fmt: skip
    except (StackGraphError, ValueError) as exc:
        request.app.state.metrics.memory_failures.labels("search").inc()
        log.error("memory search failed: %s", exc)
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE,
                            f"memory search failed: {exc}") from exc  # fmt: skip
    return list(hits)  # the memory's own dataclass is the response model
