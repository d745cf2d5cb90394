"""The world-model pages under /ui: a service's neighbourhood (now or at a past moment) and
the graph's health. Same session rule as the incident pages: no session, the login form."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response
from redis.exceptions import RedisError

from stackgraph.api.deps import ReaderDep, StoreDep
from stackgraph.errors import InputError, StoreError
from stackgraph.inputs import NAME_PATTERN
from stackgraph.rca.clock import require_time

from .auth import current_session, to_login
from .health_view import read_health
from .render import page
from .service_view import MAX_HOPS, read_service

__all__ = ["router"]

router = APIRouter()

ServiceName = Annotated[str, Path(pattern=NAME_PATTERN)]


@router.get("/services/{name}")
def service_page(
    request: Request,
    name: ServiceName,
    reader: ReaderDep,
    at: Annotated[str | None, Query(max_length=64)] = None,
    hops: Annotated[int, Query(ge=1, le=MAX_HOPS)] = 1,
) -> Response:
    """The service's neighbourhood; `at` (epoch or ISO-8601) re-draws it as the graph held
    it then (the time-travel predicate), so a fact added since is absent."""
    current = current_session(request)
    if current is None:
        return to_login(request)
    moment: float | None = None
    if at:
        try:
            moment = require_time(at, "at")
        except InputError as exc:
            return page("error.html", 422, session=current, message=str(exc))
    try:
        view = read_service(reader, name, hops, moment)
    except StoreError as exc:
        return page("error.html", 503, session=current, message=f"store unavailable: {exc}")
    return page("service.html", 200 if view.known else 404, session=current, v=view,
                graph=view.graph, at_text=at or "", max_hops=MAX_HOPS)  # fmt: skip


@router.get("/health")
def health_page(request: Request, store: StoreDep, reader: ReaderDep) -> Response:
    current = current_session(request)
    if current is None:
        return to_login(request)
    try:
        view = read_health(store, reader, time.time())
    except (StoreError, RedisError) as exc:
        return page("error.html", 503, session=current, message=f"store unavailable: {exc}")
    return page("health.html", session=current, h=view)
