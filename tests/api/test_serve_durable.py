"""Nothing accepted is lost, with real `stackgraph serve` processes: kill -9 right after
the 202s and again mid-investigation, SIGTERM with jobs queued, FalkorDB stopped under a
running server, and two servers on one stream. The model is the scripted Ollama (held
while a test needs an investigation in flight); everything else is real."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from stackgraph.api.incident_store import IncidentStore
from stackgraph.config import Settings
from stackgraph.embedded import EmbeddedFalkorDB
from stackgraph.store import GraphStore

from .conftest import ScriptedModel, call, firing

TOKEN = "durable-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Serve:
    proc: subprocess.Popen[bytes]
    url: str
    log: Path

    def post(self, body: dict[str, Any]) -> httpx.Response:
        return httpx.post(f"{self.url}/api/v1/alerts", json=body, headers=AUTH, timeout=30)

    def incident(self, fp: str) -> httpx.Response:
        return httpx.get(f"{self.url}/api/v1/incidents/{fp}", headers=AUTH, timeout=30)


Start = Callable[..., Serve]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Start]:
    """Start `stackgraph serve` processes (killed at the end if still running)."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(settings: Settings, model: ScriptedModel | None = None, **env: str) -> Serve:
        port = free_port()
        log = tmp_path / f"serve-{len(procs)}.log"
        assert settings.falkordb_url
        full = {**os.environ, "STACKGRAPH_API_TOKEN": TOKEN, "STACKGRAPH_GRAPH": settings.graph,
                "STACKGRAPH_FALKORDB_URL": settings.falkordb_url,
                "STACKGRAPH_DATA_DIR": str(tmp_path / "data"), "STACKGRAPH_API_MEMORY": "false",
                "STACKGRAPH_API_CLAIM_IDLE_S": "1", "STACKGRAPH_API_WORKERS": "1",
                **env}  # fmt: skip
        if model is not None:
            full["STACKGRAPH_OLLAMA_HOST"] = model.url
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "stackgraph", "serve", "--port", str(port)],
                env=full, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        procs.append(proc)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    return Serve(proc, url, log)
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


@pytest.fixture
def model(scripted_model: ScriptedModel) -> Iterator[ScriptedModel]:
    """A model that ends each investigation at once ("insufficient evidence"), holding
    every reply until the test sets `model.hold`."""
    scripted_model.script = [call("insufficient_evidence", reason="scripted")]
    scripted_model.hold = threading.Event()
    yield scripted_model
    scripted_model.hold.set()


def alerts(*fps: str) -> dict[str, Any]:
    """One webhook; each alert on a service of its own, so none groups with another."""
    body = firing(fps[0])
    body["alerts"] = [{**body["alerts"][0], "fingerprint": fp,
                       "labels": {**body["alerts"][0]["labels"], "service": f"svc-{fp}"}}
                      for fp in fps]  # fmt: skip
    return body


def finished(server: Serve, fps: list[str], timeout: float = 120) -> dict[str, dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        got = {fp: server.incident(fp) for fp in fps}
        details = {fp: r.json() for fp, r in got.items() if r.status_code == 200}
        if len(details) == len(fps) and all(d["state"] == "done" for d in details.values()):
            return details
        assert time.monotonic() < deadline, ({fp: r.text for fp, r in got.items()},
                                             server.log.read_text()[-3000:])  # fmt: skip
        time.sleep(0.2)


def kill9(server: Serve) -> None:
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(timeout=30)


def test_kill_9_after_the_202s_and_mid_investigation_loses_nothing(
    settings: Settings, store: GraphStore, serve: Start, model: ScriptedModel
) -> None:
    fps = [f"k{i}" for i in range(5)]
    first = serve(settings, model)
    for fp in fps:
        assert first.post(alerts(fp)).status_code == 202
    kill9(first)  # right after the last 202
    model.asked.clear()
    second = serve(settings, model)
    assert model.asked.wait(60), second.log.read_text()  # an investigation is in flight
    asked = len(model.requests)
    kill9(second)  # mid-investigation
    model.hold.set()
    third = serve(settings, model)
    details = finished(third, fps)
    assert all(d["investigations"] == 1 and d["ending"] == "insufficient_evidence"
               and d["writeback"]["written"] for d in details.values())  # fmt: skip
    assert len(model.requests) >= asked + len(fps)  # the cut-off one was asked again


def test_sigterm_leaves_queued_jobs_to_the_next_process(
    settings: Settings, store: GraphStore, serve: Start, model: ScriptedModel
) -> None:
    fps = [f"t{i}" for i in range(4)]
    first = serve(settings, model)
    assert first.post(alerts(*fps)).json()["started"] == fps
    assert model.asked.wait(60)  # one in flight (one worker), three waiting
    first.proc.send_signal(signal.SIGTERM)
    first.proc.wait(timeout=60)  # uvicorn exits by the signal again once it has shut down
    assert "Application shutdown complete" in first.log.read_text()
    model.hold.set()
    second = serve(settings, model)
    details = finished(second, fps)
    assert all(d["investigations"] == 1 for d in details.values())


def test_falkordb_down_answers_503_and_every_accepted_incident_finishes(
    settings: Settings, serve: Start, model: ScriptedModel, tmp_path: Path
) -> None:
    port = free_port()
    data = tmp_path / "falkordb"
    server = EmbeddedFalkorDB(data, port)
    server.start()
    own = settings.model_copy(update={"falkordb_url": f"redis://127.0.0.1:{port}"})
    try:
        api = serve(own, model)
        accepted = [f"d{i}" for i in range(3)]
        assert api.post(alerts(*accepted)).status_code == 202
        assert model.asked.wait(60)
        server.stop()
        refused = [f"r{i}" for i in range(3)]
        for fp in refused:
            r = api.post(alerts(fp))
            assert r.status_code == 503 and r.headers["retry-after"] == "10", r.text
        assert httpx.get(f"{api.url}/readyz", timeout=10).status_code == 503
        model.hold.set()  # the investigation ends while its store is gone: its job stays pending
        server = EmbeddedFalkorDB(data, port)
        server.start()
        for fp in refused:  # Alertmanager sends them again
            deadline = time.monotonic() + 60
            while api.post(alerts(fp)).status_code != 202:
                assert time.monotonic() < deadline, api.log.read_text()[-3000:]
                time.sleep(0.2)
        details = finished(api, accepted + refused)
        assert all(d["writeback"]["written"] for d in details.values())
    finally:
        model.hold.set()
        server.stop()


def test_two_servers_on_one_stream_investigate_each_incident_once(
    settings: Settings, store: GraphStore, serve: Start, model: ScriptedModel
) -> None:
    model.hold.set()
    model.delay_s = 0.3  # each investigation takes a while, so both servers work
    a, b = serve(settings, model), serve(settings, model)
    fps = [f"two{i}" for i in range(10)]
    assert a.post(alerts(*fps[:5])).status_code == 202
    assert b.post(alerts(*fps[5:])).status_code == 202
    details = finished(b, fps)
    assert all(d["investigations"] == 1 for d in details.values())
    assert len(model.requests) == len(fps)  # the model was asked once per incident
    records = IncidentStore(store)
    pids = {str(records.get(fp).investigated_by).split(":")[1] for fp in fps}
    assert pids == {str(a.proc.pid), str(b.proc.pid)}
    listing = [httpx.get(f"{s.url}/api/v1/incidents", headers=AUTH).json() for s in (a, b)]
    assert listing[0] == listing[1]  # every replica answers the same
