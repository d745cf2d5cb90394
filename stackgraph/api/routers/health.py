"""Health, readiness and metrics: no token needed (probes and scrapers)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from stackgraph.errors import StackGraphError

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """The process answers."""
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"description": "Not ready (store or workers)."}})
def readyz(request: Request) -> JSONResponse:
    """The store answers and the investigation workers run."""
    service = getattr(request.app.state, "service", None)
    problems: list[str] = []
    if service is None:
        problems.append("not started")
    else:
        try:
            service.store.exists()
        except StackGraphError as exc:
            problems.append(str(exc))
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
