"""`POST /api/v1/alerts`: the Alertmanager webhook (payload version 4)."""

from __future__ import annotations

from fastapi import APIRouter, status

from stackgraph.errors import StoreError

from ..deps import Authed, ServiceDep
from ..schemas import AlertmanagerWebhook, AlertsAccepted
from ..service import QueueFull
from .common import AUTH_RESPONSES, BODY, BUSY, busy

router = APIRouter(prefix="/api/v1", tags=["alerts"], dependencies=[Authed],
                   responses=AUTH_RESPONSES)  # fmt: skip


@router.post("/alerts", status_code=status.HTTP_202_ACCEPTED, responses={**BUSY, **BODY})
def receive_alerts(body: AlertmanagerWebhook, service: ServiceDep) -> AlertsAccepted:
    """202 once the alerts are stored (their incidents and investigation jobs, in Redis);
    investigations run in the background. A firing alert joins its open incident, or the
    open incident of its service within the correlation window; resolved alerts close
    it. A full queue or an unreachable store answers 503 with Retry-After and stores
    nothing, so Alertmanager retries: an alert is never dropped silently."""
    try:
        got = service.receive([a.to_alert() for a in body.alerts])
    except (QueueFull, StoreError) as exc:
        raise busy(exc) from exc
    return AlertsAccepted(started=got.started, joined=got.joined, closed=got.closed)
