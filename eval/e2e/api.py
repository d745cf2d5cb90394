"""The replayed case's alert through the real API: `stackgraph serve`'s app (its lifespan,
workers and durable job stream) under uvicorn on 127.0.0.1, the alert POSTed as
Alertmanager's webhook (payload version 4), the incident polled until it ends.

    with serving(settings, graph, token) as url:
        detail, seconds = run_incident(url, token, webhook(alert, ...))

Nothing here reaches into the app: the settings are what a deployment would configure
(`PROMETHEUS_URL`, `agent_repos`, ...), and the store handed over is the one those
settings name, bound to the case's graph key.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import httpx

from stackgraph.api import create_app
from stackgraph.api.threaded import serve_in_thread
from stackgraph.config import Settings
from stackgraph.rca import Alert
from stackgraph.store import GraphStore

__all__ = ["ENDED", "IncidentTimeout", "confirm", "run_incident", "serving", "webhook"]

ENDED = ("done", "failed")
"""Incident states after which nothing more happens to it."""
POLL_S = 0.05
START_TIMEOUT_S = 600.0
"""The app's start-up reads what the settings name (span and log files: about 10 s for
nezha-tt's 326k spans on a loaded machine); it is not part of an incident's time."""
RECEIVER = "stackgraph"


class IncidentTimeout(RuntimeError):
    """The incident did not end in time (its last state is in the message)."""


def _rfc3339(t: float) -> str:
    """Alertmanager's time format (Go's RFC 3339 with fractional seconds, UTC)."""
    text = datetime.fromtimestamp(t, tz=UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def webhook(alert: Alert, *, external_url: str, generator_url: str) -> dict[str, Any]:
    """What Alertmanager POSTs for one firing alert grouped by alertname and service
    (payload version 4): the group's labels, the alert with its startsAt, a zero endsAt
    (still firing) and its fingerprint."""
    labels = dict(alert.labels)
    group = {k: labels[k] for k in ("alertname", "service") if k in labels}
    key = "{}:{" + ", ".join(f'{k}="{v}"' for k, v in group.items()) + "}"
    if alert.starts_at is None or not alert.fingerprint:
        raise ValueError("a webhook alert needs its startsAt and fingerprint")
    return {
        "version": "4",
        "groupKey": key,
        "truncatedAlerts": 0,
        "status": "firing",
        "receiver": RECEIVER,
        "groupLabels": group,
        "commonLabels": labels,
        "commonAnnotations": dict(alert.annotations),
        "externalURL": external_url,
        "alerts": [{
            "status": "firing",
            "labels": labels,
            "annotations": dict(alert.annotations),
            "startsAt": _rfc3339(alert.starts_at),
            "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": generator_url,
            "fingerprint": alert.fingerprint,
        }],
    }  # fmt: skip


@contextmanager
def serving(settings: Settings, store: GraphStore, token: str) -> Iterator[str]:
    """`stackgraph serve`'s app on a free port of 127.0.0.1 for the block: plans, agent,
    tool context and memory as `settings` configure them; yields its base URL."""
    app = create_app(settings, store=store, token=token)
    with serve_in_thread(app, start_timeout_s=START_TIMEOUT_S) as url:
        yield url


def run_incident(
    url: str, token: str, payload: dict[str, Any], timeout_s: float
) -> tuple[dict[str, Any], float]:
    """POST the webhook, then poll its incident until it ends: (its detail, seconds from the
    POST to the end as seen by polling). Raises IncidentTimeout, or RuntimeError when the
    webhook is not accepted."""
    auth = {"Authorization": f"Bearer {token}"}
    fp = payload["alerts"][0]["fingerprint"]
    with httpx.Client(base_url=url, headers=auth, timeout=30.0) as client:
        started = time.perf_counter()
        r = client.post("/api/v1/alerts", json=payload)
        if r.status_code != 202 or fp not in r.json().get("started", []):
            raise RuntimeError(f"webhook answered {r.status_code}: {r.text[:300]}")
        deadline = time.monotonic() + timeout_s
        state = "queued"
        while time.monotonic() < deadline:
            got = client.get(f"/api/v1/incidents/{fp}")
            if got.status_code == 200:
                detail: dict[str, Any] = got.json()
                state = str(detail.get("state"))
                if state in ENDED:
                    return detail, time.perf_counter() - started
            time.sleep(POLL_S)
    raise IncidentTimeout(f"incident {fp} still {state} after {timeout_s:.0f} s")


def confirm(url: str, token: str, fingerprint: str, root_cause: str) -> None:
    """Feedback as a user gives it once the cause is known: confirmed, with the root cause.
    The app labels the incident's trajectory before it answers."""
    auth = {"Authorization": f"Bearer {token}"}
    body = {"verdict": "confirmed", "root_cause": root_cause}
    r = httpx.post(f"{url}/api/v1/incidents/{fingerprint}/feedback", json=body, headers=auth,
                   timeout=30.0)  # fmt: skip
    if not r.is_success:
        raise RuntimeError(f"feedback answered {r.status_code}: {r.text[:300]}")
