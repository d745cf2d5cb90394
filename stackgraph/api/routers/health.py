"""Health, readiness and metrics: no token needed (probes and scrapers)."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from stackgraph.errors import StackGraphError

from ..schemas import Readiness

log = logging.getLogger(__name__)

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """The process answers."""
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"model": Readiness, "description": "Not ready."}})
def readyz(request: Request) -> JSONResponse:
    """The store answers and the investigation workers run. Without the token, so it says
    what is not ready ("store unavailable"), never why (paths, addresses)."""
    service = getattr(request.app.state, "service", None)
    problems: list[str] = []
    if service is None:
        problems.append("not started")
    else:
        try:
            service.store.exists()
        except StackGraphError as exc:  # the cause goes to the log, not to anyone asking
            log.warning("readiness: %s", exc)
            problems.append("store unavailable")
        if not service.alive:
            problems.append("investigation workers are not running")
    body = {"ready": not problems, "problems": problems}
    return JSONResponse(body, status_code=503 if problems else 200)


@router.get("/metrics", response_class=Response,
            responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}})  # fmt: skip
def metrics(request: Request) -> Response:
    """Prometheus exposition: alerts received, investigations, durations, queue depth."""
    registry = request.app.state.metrics.registry
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
