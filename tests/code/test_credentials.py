"""Qdrant's API key is sent by every command that reaches Qdrant, no error shows a
credential, and the configured `embed_model` is the model every command embeds with.

Qdrant and Ollama cannot run here: `qdrant_server` answers Qdrant's REST wire format (and
refuses a missing or wrong `api-key`), `ollama_server` Ollama's `/api/embed`."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import codelane_repos as shop
import pytest
import yaml
from ollama_server import ollama_server
from pydantic import SecretStr
from qdrant_server import QdrantServer, qdrant_server
from sgtest import stackgraph_cli
from test_code_lane import _closed_port

from stackgraph.cli.app import run_ingest
from stackgraph.config import Settings
from stackgraph.errors import ConfigError, StoreError
from stackgraph.memory import memory_for
from stackgraph.memory.code_index import CodeIndex
from stackgraph.store import GraphStore

KEY = "qk-SECRET-7"
pytestmark = pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")


@pytest.fixture
def qdrant() -> Iterator[QdrantServer]:
    with qdrant_server(api_key=KEY) as server:
        yield server


def sg(settings: Settings, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return stackgraph_cli(settings, *args, env=env, timeout=180)


def _outcomes(tmp_path: Path) -> Path:
    path = tmp_path / "outcomes.yaml"
    path.write_text(yaml.safe_dump([
        {"incident_fingerprint": "inc-1", "service": "checkout", "alert": "KubePodCrashLooping",
         "symptom": "checkout pods OOMKilled", "root_cause": "heap too small",
         "occurred_at": "2026-01-05T10:00:00Z"}]))  # fmt: skip
    return path


def test_every_qdrant_request_carries_the_api_key(
    tmp_path: Path, settings: Settings, store: GraphStore, qdrant: QdrantServer
) -> None:
    remote = settings.model_copy(
        update={"qdrant_url": qdrant.url, "qdrant_api_key": SecretStr(KEY)}
    )
    shop.make_repo(tmp_path / "shop")
    run_ingest(remote, "code", repos=(tmp_path / "shop",), store=store)  # the code index
    env = {"QDRANT_URL": qdrant.url, "QDRANT_API_KEY": KEY}
    sg(settings, "memory", "record", str(_outcomes(tmp_path)), env=env)
    hits = json.loads(sg(settings, "memory", "search", "pods OOMKilled", "--json", env=env).stdout)
    assert hits[0]["incident"] == "inc-1"
    with CodeIndex.open(remote) as index:
        assert index.count() > 0 and index.search("charge the card", 1)
    assert qdrant.local.count(settings.memory_collection).count == 1
    assert qdrant.seen and all(ok for _, _, ok in qdrant.seen), qdrant.seen
    paths = {path for _, path, _ in qdrant.seen}
    assert f"/collections/{settings.graph}_code/points" in paths
    assert f"/collections/{settings.memory_collection}/points/query" in paths


def test_no_error_shows_a_credential(
    settings: Settings, store: GraphStore, qdrant: QdrantServer
) -> None:
    wrong = settings.model_copy(
        update={"qdrant_url": qdrant.url, "qdrant_api_key": SecretStr("wrong-SECRET-8")}
    )
    down = settings.model_copy(update={
        "qdrant_url": f"http://bob:pw-SECRET-9@127.0.0.1:{_closed_port()}/?api_key=SECRET-10",
        "qdrant_api_key": SecretStr(KEY),
    })  # fmt: skip
    messages = []
    for cfg in (wrong, down):
        with pytest.raises(ConfigError) as memory_error:
            memory_for(cfg, store)
        with pytest.raises(StoreError) as index_error:
            CodeIndex.open(cfg)
        messages += [str(memory_error.value), str(index_error.value)]
    assert all("SECRET" not in m for m in messages), messages
    assert "401" in messages[0] and "401" in messages[1]
    assert "***@127.0.0.1" in messages[2] and "api_key=***" in messages[3]


def test_memory_commands_embed_with_the_configured_model(
    tmp_path: Path, settings: Settings, store: GraphStore
) -> None:
    with ollama_server(dim=1024) as ollama:
        env = {"OLLAMA_HOST": ollama.url, "STACKGRAPH_EMBED_MODEL": "nomic-embed-text"}
        sg(settings, "memory", "record", str(_outcomes(tmp_path)), env=env)
        sg(settings, "memory", "search", "pods OOMKilled", "--json", env=env)
    assert ollama.models and set(ollama.models) == {"nomic-embed-text"}
