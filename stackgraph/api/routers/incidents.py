"""Incidents: list (paginated), detail (alerts, plan, hypotheses with state, evidence,
report), feedback. Read from the records in Redis: every replica answers the same."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Response, status

from stackgraph.errors import InputError, LeaseHeldError, StoreError
from stackgraph.web import BlameGraph, graph_for

from ..deps import Authed, ReaderDep, ServiceDep
from ..schemas import FeedbackRequest, IncidentDetail, IncidentSummary, Problem
from ..service import UnknownIncident
from ..views import detail_view, summary_view
from .common import AUTH_RESPONSES, BODY, BUSY, NOT_FOUND, busy

UNKNOWN: dict[int | str, dict[str, Any]] = {
    404: {"model": Problem, "description": "No such incident, or no such root cause in the graph."}
}

router = APIRouter(prefix="/api/v1/incidents", tags=["incidents"], dependencies=[Authed],
                   responses=AUTH_RESPONSES)  # fmt: skip

Fingerprint = Annotated[str, Path(pattern=r"^[A-Za-z0-9._-]{1,128}$",
                                  description="An incident's, or any of its alerts'.")]  # fmt: skip


@router.get("", responses=BUSY)
def list_incidents(
    service: ServiceDep,
    response: Response,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> list[IncidentSummary]:
    """Incidents newest first (by arrival), `limit` from `offset`; the `X-Total-Count`
    header says how many there are. Finished incidents older than
    `api_incident_retention_s` are no longer listed (the graph keeps them)."""
    try:
        items, total = service.page(offset, limit)
    except StoreError as exc:
        raise busy(exc) from exc
    response.headers["X-Total-Count"] = str(total)
    return [summary_view(i) for i in items]


@router.get("/{fingerprint}", responses={**NOT_FOUND, **BUSY})
def get_incident(fingerprint: Fingerprint, service: ServiceDep) -> IncidentDetail:
    try:
        return detail_view(service.get(fingerprint))
    except UnknownIncident as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from exc
    except StoreError as exc:
        raise busy(exc) from exc


@router.get("/{fingerprint}/graph", responses={**NOT_FOUND, **BUSY})
def get_incident_graph(
    fingerprint: Fingerprint, service: ServiceDep, reader: ReaderDep
) -> BlameGraph:
    """The blame subgraph the web UI draws: the symptom, the candidates and the plan's paths
    between them (node size from the plan score, colour from the hypothesis state, edges
    with error rate, p95, source and status, laid out in layers from the symptom)."""
    try:
        detail = detail_view(service.get(fingerprint))
    except UnknownIncident as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from exc
    except StoreError as exc:
        raise busy(exc) from exc
    return graph_for(reader, detail)[0]


@router.post("/{fingerprint}/feedback", responses={**UNKNOWN, **BUSY, **BODY})
def post_feedback(
    fingerprint: Fingerprint, body: FeedbackRequest, service: ServiceDep
) -> IncidentDetail:
    """The confirmed root cause, or "wrong". Updates the outcome in the graph (the read
    path's history prior reads ROOT_CAUSED_BY). A root cause the graph does not know is a
    404, like an unknown incident."""
    try:
        return detail_view(service.feedback(fingerprint, body.verdict, body.root_cause))
    except UnknownIncident as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from exc
    except InputError as exc:  # well-formed, but not in the graph
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from exc
    except (LeaseHeldError, StoreError) as exc:
        raise busy(exc) from exc
