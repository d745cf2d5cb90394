"""schemathesis against the OpenAPI document, with all its checks, on two seeds, with data
that fits the schema and data that does not: no 5xx, every answer in the shape the document
declares, every status declared, bad input refused, good input accepted."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, seed
from hypothesis import settings as hsettings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from stackgraph.api import create_app
from stackgraph.config import Settings
from stackgraph.store import GraphStore

from .conftest import payment_plan

TOKEN = "fuzz-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
NO_INPUT = {"GET /api/v1/incidents", "GET /healthz", "GET /readyz", "GET /metrics"}


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
    for path in ("/api/v1/alerts", "/api/v1/investigate", "/api/v1/tools/query_stack_graph"):
        assert "400" in doc["paths"][path]["post"]["responses"]  # a body that is not UTF-8
    assert "/openapi.json" not in paths and "/docs" not in paths


def _fuzz(operation: Any, mode: GenerationMode, fixed_seed: int, failures: list[str],
          statuses: list[int]) -> None:  # fmt: skip
    @seed(fixed_seed)
    @hsettings(max_examples=12, deadline=None, database=None,
               suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case: schemathesis.Case) -> None:
        response = case.call(headers=AUTH)
        statuses.append(response.status_code)
        try:
            case.validate_response(response, headers=AUTH)  # every check
        except AssertionError as exc:
            failures.append(f"{case.operation.label} ({mode}): {exc}")

    run()


@pytest.mark.parametrize("fixed_seed", [17, 4242])
def test_every_check_passes(app: FastAPI, fixed_seed: int) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, headers=AUTH)
    failures: list[str] = []
    statuses: list[int] = []
    unsatisfiable: list[str] = []
    ops = list(schema.get_all_operations())
    assert len(ops) >= 9
    for result in ops:
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            try:
                _fuzz(operation, mode, fixed_seed, failures, statuses)
            except Unsatisfiable:  # no parameters, so no way to send a wrong one
                assert mode == GenerationMode.NEGATIVE, operation.label
                unsatisfiable.append(operation.label)
    assert set(unsatisfiable) <= NO_INPUT, unsatisfiable
    assert not failures, "\n".join(failures[:5])
    assert len(statuses) >= 5 * len(ops) and {200, 202, 422} <= set(statuses)
