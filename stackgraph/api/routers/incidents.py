"""Incidents: list, detail (plan, hypotheses with state, evidence, report), feedback."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, status

from stackgraph.errors import InputError, LeaseHeldError, StoreError

from ..deps import Authed, ServiceDep
from ..schemas import FeedbackRequest, IncidentDetail, IncidentSummary, Problem
from ..service import UnknownIncident
from ..views import detail_view, summary_view
from .common import AUTH_RESPONSES, BODY, BUSY, NOT_FOUND

UNKNOWN: dict[int | str, dict[str, Any]] = {
    404: {"model": Problem, "description": "No such incident, or no such root cause in the graph."}
}

router = APIRouter(prefix="/api/v1/incidents", tags=["incidents"], dependencies=[Authed],
                   responses=AUTH_RESPONSES)  # fmt: skip

Fingerprint = Annotated[str, Path(pattern=r"^[A-Za-z0-9._-]{1,128}$")]


@router.get("")
def list_incidents(service: ServiceDep) -> list[IncidentSummary]:
    """Incidents known to this process, newest first."""
    items = sorted(service.incidents.values(), key=lambda i: -i.outcome.opened_at)
    return [summary_view(i) for i in items]


@router.get("/{fingerprint}", responses=NOT_FOUND)
def get_incident(fingerprint: Fingerprint, service: ServiceDep) -> IncidentDetail:
    try:
        return detail_view(service.get(fingerprint))
    except UnknownIncident as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from exc


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
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, str(exc),
                            headers={"Retry-After": "10"}) from exc  # fmt: skip
