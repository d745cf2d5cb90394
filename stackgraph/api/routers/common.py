"""Responses every authenticated route may give, for the OpenAPI document."""

from __future__ import annotations

from typing import Any

from ..schemas import Problem

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
        "description": "Queue full or writer busy; retry later.",
        "headers": {"Retry-After": {"schema": {"type": "integer"}}},
    }
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": Problem, "description": "No such incident."}
}
