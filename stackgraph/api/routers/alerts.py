"""`POST /api/v1/alerts`: the Alertmanager webhook (payload version 4)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, status

from ..deps import Authed, ServiceDep
from ..schemas import AlertmanagerWebhook, AlertsAccepted
from ..service import QueueFull
from .common import AUTH_RESPONSES, BODY, BUSY

router = APIRouter(prefix="/api/v1", tags=["alerts"], dependencies=[Authed],
                   responses=AUTH_RESPONSES)  # fmt: skip

RETRY_AFTER_S = 10


@router.post("/alerts", status_code=status.HTTP_202_ACCEPTED, responses={**BUSY, **BODY})
def receive_alerts(body: AlertmanagerWebhook, service: ServiceDep) -> AlertsAccepted:
    """Accept at once; investigate in the background. Re-sent firing alerts join their
    open incident; resolved alerts close it. A full queue answers 503 with Retry-After, so
    Alertmanager retries: an alert is never dropped silently."""
    try:
        got = service.receive([a.to_alert() for a in body.alerts])
    except QueueFull as exc:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, str(exc),
                            headers={"Retry-After": str(RETRY_AFTER_S)}) from exc  # fmt: skip
    return AlertsAccepted(started=got.started, joined=got.joined, closed=got.closed)
