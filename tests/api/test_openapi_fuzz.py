"""schemathesis against the OpenAPI document: no input makes the API answer 5xx."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from schemathesis.checks import not_a_server_error

from stackgraph.api import create_app
from stackgraph.config import Settings
from stackgraph.store import GraphStore

from .conftest import payment_plan

TOKEN = "fuzz-token"


@pytest.fixture
def app(settings: Settings, platform: GraphStore) -> Iterator[FastAPI]:
    roomy = settings.model_copy(update={"api_queue_size": 10_000, "api_workers": 1})
    api = create_app(roomy, store=platform, plan_fn=payment_plan, token=TOKEN)
    with TestClient(api):  # runs the lifespan: service and workers
        yield api


def test_openapi_is_complete(app: FastAPI) -> None:
    doc = app.openapi()
    paths = set(doc["paths"])
    assert {"/api/v1/alerts", "/api/v1/incidents", "/api/v1/incidents/{fingerprint}",
            "/api/v1/incidents/{fingerprint}/feedback", "/api/v1/investigate",
            "/api/v1/tools/query_stack_graph", "/healthz", "/readyz",
            "/metrics"} <= paths  # fmt: skip
    alerts = doc["paths"]["/api/v1/alerts"]["post"]
    assert {"202", "401", "413", "422", "503"} <= set(alerts["responses"])
    assert alerts["security"] == [{"HTTPBearer": []}]
    assert "security" not in doc["paths"]["/healthz"]["get"]


def test_no_server_errors(app: FastAPI) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    failures: list[str] = []
    statuses: list[int] = []
    ops = list(schema.get_all_operations())
    assert len(ops) >= 9
    for result in ops:
        operation = result.ok()

        @hsettings(max_examples=12, deadline=None, database=None,
                   suppress_health_check=list(HealthCheck))  # fmt: skip
        @given(case=operation.as_strategy())
        def run(case: schemathesis.Case) -> None:
            response = case.call(headers={"Authorization": f"Bearer {TOKEN}"})
            statuses.append(response.status_code)
            try:
                case.validate_response(response, checks=[not_a_server_error])
            except AssertionError as exc:
                failures.append(f"{case.operation.label}: {exc}")

        run()
    assert not failures, "\n".join(failures[:5])
    assert len(statuses) >= 5 * len(ops) and 202 in statuses and 200 in statuses
