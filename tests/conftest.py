"""Shared fixtures: one real embedded FalkorDB per session, a fresh graph key per test."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sgtest import IN_CI as IN_CI
from sgtest import REPO as REPO
from sgtest import ScriptedModel, serve_http
from sgtest import require as require

from stackgraph.config import Settings, load_settings
from stackgraph.embedded import EmbeddedFalkorDB
from stackgraph.store import GraphStore


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never talk to servers configured in the developer's shell."""
    for var in list(os.environ):
        if var.startswith("STACKGRAPH_") or var in {
            "FALKORDB_URL", "QDRANT_URL", "OLLAMA_HOST", "PROMETHEUS_URL", "KUBECONFIG",
            "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
        }:  # fmt: skip
            monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="session")
def falkordb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedFalkorDB]:
    data = tmp_path_factory.mktemp("falkordb")
    server = EmbeddedFalkorDB(data)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def settings(falkordb_server: EmbeddedFalkorDB, tmp_path: Path) -> Settings:
    """Settings pointing at the session server, with a graph key of this test's own."""
    assert falkordb_server.endpoint is not None
    return load_settings(
        None,
        data_dir=tmp_path / "data",
        falkordb_url=falkordb_server.endpoint.url(),
        graph=f"t_{uuid.uuid4().hex[:12]}",
    )


@pytest.fixture
def store(settings: Settings) -> Iterator[GraphStore]:
    with GraphStore.open(settings) as s:
        yield s
        # raw: a test may have left the writer lease held on purpose
        keys = list(s.conn.scan_iter(f"stackgraph:{settings.graph}:*", count=1000))
        # the graph, the writer lease, incident records and the job stream
        s.conn.delete(settings.graph, *keys)


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    """A private copy of the example platform, so tests may edit it."""
    dst = tmp_path / "examples"
    shutil.copytree(REPO / "examples", dst)
    return dst


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModel]:
    model = ScriptedModel([])

    def chat(path: str, body: Any) -> tuple[int, Any]:
        if path != "/api/chat":
            return 404, f"no route {path}"
        return 200, model.reply(body)

    with serve_http(post=chat) as url:
        model.url = url
        yield model
