"""Alertmanager webhook payloads (version 4) → `Alert` records."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stackgraph.errors import InputError

from .clock import parse_time
from .model import Alert


def alerts_from_webhook(payload: Mapping[str, Any], origin: str = "webhook") -> list[Alert]:
    """Every alert of a v4 webhook payload, common labels merged under each alert's own."""
    if not isinstance(payload, Mapping):
        raise InputError(f"{origin}: an Alertmanager payload must be a JSON object")
    if str(payload.get("version", "4")) != "4":
        raise InputError(f"{origin}: version {payload.get('version')!r} is not 4")
    items = payload.get("alerts")
    if not isinstance(items, list) or not items:
        raise InputError(f"{origin}: 'alerts' must be a non-empty list")
    common = payload.get("commonLabels") or {}
    out: list[Alert] = []
    for i, item in enumerate(items):
        labels = item.get("labels") if isinstance(item, Mapping) else None
        if not isinstance(labels, Mapping):
            raise InputError(f"{origin}: alerts[{i}].labels must be an object")
        merged = {str(k): str(v) for k, v in {**common, **labels}.items()}
        starts = parse_time(item.get("startsAt"))
        out.append(
            Alert(
                labels=merged,
                annotations={str(k): str(v) for k, v in (item.get("annotations") or {}).items()},
                starts_at=starts,
                fingerprint=item.get("fingerprint"),
                status=str(item.get("status", "firing")),
            )
        )
    return out
