"""`POST /api/v1/investigate`: an ad hoc investigation (plan now, verification queued)."""

from __future__ import annotations

from fastapi import APIRouter, status

from stackgraph.errors import StoreError

from ..deps import Authed, ServiceDep
from ..schemas import InvestigateAccepted, InvestigateRequest
from ..service import QueueFull
from .common import AUTH_RESPONSES, BODY, BUSY, busy

router = APIRouter(prefix="/api/v1", tags=["investigate"], dependencies=[Authed],
                   responses=AUTH_RESPONSES)  # fmt: skip


@router.post("/investigate", status_code=status.HTTP_202_ACCEPTED, responses={**BUSY, **BODY})
def investigate_adhoc(body: InvestigateRequest, service: ServiceDep) -> InvestigateAccepted:
    """The plan comes back at once; with `verify`, the agent's run is queued as an incident
    (`GET /api/v1/incidents/{fingerprint}`)."""
    alert = body.to_alert("adhoc")
    plan = service.plan(alert)
    if not body.verify:
        return InvestigateAccepted(fingerprint=None, queued=False, plan=plan.to_dict())
    try:
        fp = service.adhoc(alert, plan)
    except (QueueFull, StoreError) as exc:
        raise busy(exc) from exc
    return InvestigateAccepted(fingerprint=fp, queued=True, plan=plan.to_dict())
