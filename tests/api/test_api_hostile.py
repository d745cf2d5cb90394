"""Hostile HTTP input (issue 17, rows 5-10 and 13-15): text that may not travel is a 422
naming the field and the API keeps answering everyone; write-back tells the truth; a label
never creates a Service; every oversized body is a 413; docs and readiness say no more
than they should."""

from __future__ import annotations

import gc
import json
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from stackgraph.api import create_app
from stackgraph.config import Settings
from stackgraph.embedded import EmbeddedFalkorDB
from stackgraph.rca.model import Alert
from stackgraph.store import GraphStore, connect

from .conftest import firing, payment_plan
from .test_api import AUTH, TOKEN, make_client, rows, wait_done

JSON = {**AUTH, "Content-Type": "application/json"}


@pytest.fixture
def client(settings: Settings, platform: GraphStore) -> Iterator[TestClient]:
    with make_client(settings, platform) as c:
        yield c


def _post_raw(client: TestClient, path: str, body: Any) -> Any:
    """JSON with `\\ud800`-style escapes, as a hostile client writes it (httpx's own JSON
    encoder could not encode a lone surrogate)."""
    return client.post(path, content=json.dumps(body), headers=JSON)


@pytest.mark.parametrize(
    ("where", "value", "loc", "what"),
    [
        ("labels", "\ud800", ["labels", "service"], "unable to parse raw data as a unicode"),
        ("annotations", "\udfff summary", ["annotations", "summary"], "as a unicode string"),
        ("labels", "checkout\x00x", ["labels", "service"], "a NUL character (U+0000) at index 8"),
        ("annotations", "ok\x00", ["annotations", "summary"], "a NUL character"),
        ("labels", "\x1b[2Jcheckout", ["labels", "service"], "a control character (U+001B)"),
    ],
)
def test_text_that_may_not_travel_is_refused_and_the_api_keeps_answering(
    client: TestClient, where: str, value: str, loc: list[str], what: str
) -> None:
    body = firing("fp-hostile")
    key = "service" if where == "labels" else "summary"
    body["alerts"][0][where][key] = value
    r = _post_raw(client, "/api/v1/alerts", body)
    assert r.status_code == 422
    (error,) = r.json()["detail"]
    assert error["loc"] == ["body", "alerts", 0, *loc] and what in error["msg"]
    assert "input" not in error  # the bad text is not echoed back
    assert client.get("/api/v1/incidents", headers=AUTH).status_code == 200
    assert client.get("/api/v1/incidents/fp-hostile", headers=AUTH).status_code == 404
    adhoc = _post_raw(client, "/api/v1/investigate", {"labels": {"service": value}})
    assert adhoc.status_code == 422


def test_length_caps_on_labels_and_annotations(client: TestClient) -> None:
    body = firing("fp-big")
    body["alerts"][0]["labels"]["service"] = "s" * 900_000
    r = client.post("/api/v1/alerts", json=body, headers=AUTH)
    assert r.status_code == 422
    assert "at most 1024 characters" in r.json()["detail"][0]["msg"]
    body = firing("fp-big")
    body["alerts"][0]["annotations"]["summary"] = "s" * 40_000
    assert client.post("/api/v1/alerts", json=body, headers=AUTH).status_code == 422


def test_written_is_true_only_if_every_record_was(settings: Settings, platform: GraphStore) -> None:
    """Past the boundary (a caller of the service itself), a record the writer refuses
    makes `written` false and is listed."""
    with make_client(settings, platform) as c:
        service = c.app.state.service  # type: ignore[attr-defined]
        bad = Alert({"service": "checkout", "alertname": "Bad\x00Name"}, {}, None, "fp-nul")
        service.receive([bad])
        detail = wait_done(c, "fp-nul")
    assert detail["writeback"]["written"] is False
    rejected = detail["writeback"]["rejected"]
    assert any("Alert{fingerprint='fp-nul'}" in r and "NUL" in r for r in rejected), rejected
    assert "stackgraph_writeback_failures_total 1.0" in c.get("/metrics").text


def test_an_unknown_service_label_creates_no_service(
    client: TestClient, platform: GraphStore
) -> None:
    before = rows(platform, "MATCH (s:Service) RETURN count(s)")
    names = ["zz-unknown", "x'}) DETACH DELETE n //", "\u202eevil"]
    for i, name in enumerate(names):
        body = firing(f"fp-u{i}")
        body["alerts"][0]["labels"]["service"] = name
        assert client.post("/api/v1/alerts", json=body, headers=AUTH).status_code == 202
    leaders = set()
    for i, name in enumerate(names):
        detail = wait_done(client, f"fp-u{i}")
        assert detail["writeback"]["written"] is True, detail["writeback"]
        # the alerts anchor on the same plan (their other labels), so a storm may group them
        # (under whichever alert's worker planned first)
        assert name in {detail["symptom"], *(c["symptom"] for c in detail["correlated"])}
        leaders.add(detail["fingerprint"])
    assert rows(platform, "MATCH (s:Service) RETURN count(s)") == before
    got = rows(platform, "MATCH (i:Incident) WHERE i.fingerprint IN $fps "
               "RETURN i.service, i.symptom_known", fps=sorted(leaders))  # fmt: skip
    assert got and all(service in names and known is False for service, known in got), got


def test_every_oversized_body_is_a_413(client: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"receiver": "x", "status": "firing", "alerts": ["'
        for _ in range(10 * 1024):
            yield b"y" * 1024  # 10 MB in 1 KB chunks, no Content-Length
        yield b'"]}'

    r = client.post("/api/v1/alerts", content=chunks(), headers=JSON)
    assert r.status_code == 413 and r.json() == {"detail": "Content Too Large"}
    sized = client.post("/api/v1/alerts", content=b"x" * 2_000_000, headers=JSON)
    assert sized.status_code == 413
    assert client.get("/api/v1/incidents", headers=AUTH).status_code == 200


def test_docs_need_the_token_unless_opened(settings: Settings, platform: GraphStore) -> None:
    with make_client(settings, platform) as c:
        for path in ("/openapi.json", "/docs", "/redoc"):
            assert c.get(path).status_code == 401, path
            assert c.get(path, headers=AUTH).status_code == 200, path
        assert "/api/v1/alerts" in c.get("/openapi.json", headers=AUTH).json()["paths"]
    opened = settings.model_copy(update={"api_docs_public": True})
    with make_client(opened, platform) as c:
        for path in ("/openapi.json", "/docs", "/redoc"):
            assert c.get(path).status_code == 200, path


def test_an_app_that_served_and_stopped_is_freed(settings: Settings, platform: GraphStore) -> None:
    """A process that builds an app per job (`eval e2e` builds one per case) must not keep
    them: FastAPI caches endpoint functions process-wide, so a handler closing over its app
    pinned every app, its service and its caches, until the process reached 20 GB."""
    for public in (False, True):
        opened = settings.model_copy(update={"api_docs_public": public})
        with make_client(opened, platform) as c:
            assert c.get("/openapi.json", headers=AUTH).status_code == 200
            app = weakref.ref(c.app)
        del c
        gc.collect()
        assert app() is None, f"api_docs_public={public}: the app outlived its client"


def test_readyz_says_store_unavailable_without_internals(
    settings: Settings, tmp_path: Path
) -> None:
    server = EmbeddedFalkorDB(tmp_path / "data")
    endpoint = server.start()
    assert endpoint.unix_socket is not None
    store = GraphStore(connect(unix_socket_path=endpoint.unix_socket), "g", endpoint.url())
    app = create_app(settings, store=store, plan_fn=payment_plan, token=TOKEN,
                     memory_fn=lambda _store: None)  # fmt: skip
    with TestClient(app) as c:
        assert c.get("/readyz").json() == {"ready": True, "problems": []}
        server.stop()  # the store goes down under a running API
        r = c.get("/readyz")
    assert r.status_code == 503
    assert r.json() == {"ready": False, "problems": ["store unavailable"]}
    assert str(tmp_path) not in r.text and "sock" not in r.text


def test_schema_drift_is_refused_in_the_documented_shapes(client: TestClient) -> None:
    body = firing("fp-drift")
    body["alerts"][0]["endsAt"] = 0
    r = client.post("/api/v1/alerts", json=body, headers=AUTH)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][-1] == "endsAt"
    r = client.post("/api/v1/investigate", json={"labels": {"service": "checkout"}, "verify": 0},
                    headers=AUTH)  # fmt: skip
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "verify"]
    r = client.post("/api/v1/alerts", content=b'{"receiver": "t\xff"}', headers=JSON)
    assert r.status_code == 400 and r.json() == {"detail": "There was an error parsing the body"}
    doc = client.get("/openapi.json", headers=AUTH).json()
    assert "400" in doc["paths"]["/api/v1/alerts"]["post"]["responses"]
    r = client.post("/api/v1/incidents/x/feedback", json={"verdict": "confirmed",
                    "root_cause": None}, headers=AUTH)  # fmt: skip
    assert r.status_code == 422 and isinstance(r.json()["detail"], list)
    for query in ("as_of=", "as_of=yesterday", "known_at=1e400", "q=a%00b"):
        r = client.get(f"/api/v1/memory/search?q=x&{query}", headers=AUTH)
        assert r.status_code == 422 and isinstance(r.json()["detail"], list), query
