"""Responses every authenticated route may give, for the OpenAPI document, and the one
way a route says "busy, retry later"."""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException, status

from ..schemas import Problem

RETRY_AFTER_S = 10
"""What a 503 asks the sender (Alertmanager retries on its own schedule) to wait."""

AUTH_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"model": Problem, "description": "Missing or wrong bearer token."},
    413: {"model": Problem, "description": "Request body too large."},
}
BODY: dict[int | str, dict[str, Any]] = {
    400: {"model": Problem, "description": "The body could not be read (e.g. not UTF-8)."}
}
BUSY: dict[int | str, dict[str, Any]] = {
    503: {
        "model": Problem,
        "description": "Queue full, store unreachable or writer busy; retry later.",
        "headers": {"Retry-After": {"schema": {"type": "integer"}}},
    }
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": Problem, "description": "No such incident."}
}


def busy(exc: Exception) -> HTTPException:
    """503 with Retry-After: nothing was accepted, the sender should send it again."""
    return HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, str(exc),
                         headers={"Retry-After": str(RETRY_AFTER_S)})  # fmt: skip
