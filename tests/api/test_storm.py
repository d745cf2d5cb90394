"""An alert storm through the real webhook, planner and agent floor: 1,000 distinct firing
alerts, 20 per webhook, against the default two workers and a queue of 64. The storm is
one cause (payment failing, seen from its callers) plus the noise of every other service;
it settles into a few incidents, each investigated once, with every alert in one."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from fastapi.testclient import TestClient

from stackgraph.api import create_app
from stackgraph.config import Settings
from stackgraph.store import GraphStore

from .conftest import firing
from .test_api import AUTH

SERVICES = ["checkout", "frontend", "payment", "cart", "catalog", "inventory",
            "recommendation", "shipping"]  # fmt: skip
ALERTNAMES = ["HighErrorRate", "HighLatency", "PodRestarting", "SaturationHigh"]


def storm(n: int) -> list[dict[str, Any]]:
    """n distinct alerts (distinct fingerprints and pods): half on payment and its callers,
    half spread over every service."""
    template = firing("x")["alerts"][0]
    out = []
    for i in range(n):
        service = SERVICES[(i // 2) % 3] if i % 2 == 0 else SERVICES[(i // 2) % len(SERVICES)]
        labels = {**template["labels"], "service": service, "alertname": ALERTNAMES[i % 4],
                  "pod": f"{service}-7d9f8b7c5d-{i:05d}"}  # fmt: skip
        out.append({**template, "labels": labels, "fingerprint": f"storm-{i:04d}"})
    return out


def post_all(client: TestClient, alerts: list[dict[str, Any]], per_call: int) -> int:
    """Deliver like Alertmanager: a refused webhook is sent again after Retry-After (here
    at once; the test does not wait on the clock). Returns how many calls were refused."""
    body = firing("x")
    refused = 0
    for start in range(0, len(alerts), per_call):
        body["alerts"] = alerts[start : start + per_call]
        for _attempt in range(600):
            r = client.post("/api/v1/alerts", json=body, headers=AUTH)
            if r.status_code == 202:
                break
            assert r.status_code == 503 and r.headers["retry-after"], r.text
            refused += 1
            time.sleep(0.05)
        else:
            raise AssertionError(f"webhook {start // per_call} never accepted")
    return refused


def settled(client: TestClient, timeout: float = 300) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        listing = client.get("/api/v1/incidents", params={"limit": 500}, headers=AUTH).json()
        if listing and all(i["state"] in ("done", "failed") for i in listing):
            backlog = client.get("/metrics").text
            if "stackgraph_queue_depth 0.0" in backlog:
                return [client.get(f"/api/v1/incidents/{i['fingerprint']}", headers=AUTH).json()
                        for i in listing]  # fmt: skip
        assert time.monotonic() < deadline, "the storm did not settle"
        time.sleep(0.2)


def test_a_storm_of_1000_alerts_settles_into_few_incidents(
    settings: Settings, platform: GraphStore
) -> None:
    alerts = storm(1000)
    app = create_app(settings.model_copy(update={"api_memory": False}), store=platform,
                     token=AUTH["Authorization"].split()[1])  # fmt: skip
    with TestClient(app) as client:
        started = time.monotonic()
        refused = post_all(client, alerts, per_call=20)
        incidents = settled(client)
        took = time.monotonic() - started
    print(f"\nstorm: 1000 alerts -> {len(incidents)} incidents in {took:.1f} s, "
          f"{refused} webhook(s) refused and re-sent")  # fmt: skip
    for i in incidents:
        print(
            f"  {i['fingerprint']} {i['symptom']}: {i['alert_count']} alerts, "
            f"{i['investigations']} investigation(s), joined {i['correlated']}"
        )
    accounted = Counter(a["fingerprint"] for i in incidents for a in i["alerts"])
    assert set(accounted) == {a["fingerprint"] for a in alerts}
    assert max(accounted.values()) == 1  # each alert in exactly one incident
    assert sum(i["alert_count"] for i in incidents) == 1000
    assert len(incidents) <= len(SERVICES)
    # payment failing, seen from checkout, frontend and payment itself: one incident
    holder = {a["fingerprint"]: i["fingerprint"] for i in incidents for a in i["alerts"]}
    assert holder["storm-0000"] == holder["storm-0002"] == holder["storm-0004"]
    assert all(i["investigations"] == 1 and i["state"] == "done" for i in incidents)
