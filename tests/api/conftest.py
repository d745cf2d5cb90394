"""Fixtures for the API and agent tests: a small platform graph, a real Git repo, a
Kubernetes API (the shared fake) with payment's pods crash-looping, an injected plan, and
a scripted model speaking Ollama's /api/chat wire format."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kube_apiserver import FakeKube, kube_list, serve_kube
from sgtest import ScriptedModel as ScriptedModel

from stackgraph.config import Settings
from stackgraph.ingest import GraphIngestor
from stackgraph.rca.model import Alert, Candidate, Plan
from stackgraph.schema import EdgeRecord, NodeRef, RecordBatch
from stackgraph.store import GraphStore

REPO = Path(__file__).resolve().parents[2]


def svc(name: str) -> NodeRef:
    return NodeRef("Service", {"name": name})


@pytest.fixture
def platform(settings: Settings, store: GraphStore) -> GraphStore:
    """The example catalog plus Tempo telemetry: checkout → payment failing at 12%."""
    from stackgraph.cli.app import run_ingest

    run_ingest(settings, "catalog", catalog=REPO / "examples/platform/catalog.yaml", store=store)
    telemetry = RecordBatch(edges=[
        EdgeRecord("CALLS", svc("checkout"), svc("payment"),
                   {"error_rate": 0.12, "latency_p95_ms": 840.0, "trace_count": 5000}, "Tempo"),
        EdgeRecord("CALLS", svc("checkout"), svc("inventory"),
                   {"error_rate": 0.001, "latency_p95_ms": 40.0, "trace_count": 3000}, "Tempo"),
    ])  # fmt: skip
    with GraphIngestor(store, who="test") as writer:
        report = writer.write(telemetry)
    assert not report.rejected
    return store


@pytest.fixture
def payment_repo(tmp_path: Path) -> Path:
    """A real Git repo whose last commit lands 10 minutes before 'now'."""
    repo = tmp_path / "payment"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
           "GIT_COMMITTER_NAME": "dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}  # fmt: skip

    def git(*args: str, when: float | None = None) -> None:
        e = dict(env)
        if when is not None:
            e["GIT_AUTHOR_DATE"] = e["GIT_COMMITTER_DATE"] = f"@{int(when)} +0000"
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=e, capture_output=True)

    git("init", "-q", "-b", "main")
    (repo / "charge.py").write_text("TIMEOUT = 30\n")
    git("add", ".")
    git("commit", "-qm", "initial", when=time.time() - 86400 * 3)
    (repo / "charge.py").write_text("TIMEOUT = 0.05\n")
    git("commit", "-qam", "lower the charge timeout to 50 ms", when=time.time() - 600)
    return repo


@pytest.fixture
def payment_kube() -> Iterator[FakeKube]:
    """Namespace `shop`: payment's pod OOM-killed and crash-looping, inventory has no pods.
    With it, k8s_pod_status is payment's line of evidence beside Git (the graph's own check
    re-reads the plan's facts and is no line towards Validated)."""
    crash = {"name": "app", "image": "payment:1", "imageID": "", "ready": False,
             "restartCount": 3, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
             "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}}}  # fmt: skip
    pod = {"metadata": {"name": "payment-7c9f-abcde", "namespace": "shop",
                        "labels": {"app.kubernetes.io/name": "payment"}},
           "spec": {"containers": [{"name": "app", "image": "payment:1"}]},
           "status": {"phase": "Running", "containerStatuses": [crash]}}  # fmt: skip
    with serve_kube({"/api/v1/pods": kube_list("PodList", "v1", [pod])}) as fake:
        yield fake


def kube_args(kube: FakeKube | None) -> dict[str, Any]:
    """ToolContext arguments for the fake cluster (none without one)."""
    return {"kube": kube.api_client(), "kube_namespace": "shop"} if kube else {}


def payment_plan(store: GraphStore, alert: Alert) -> Plan:
    """An injected plan, so these tests do not depend on the ranking's details."""
    return Plan(
        anchor="checkout",
        candidates=[
            Candidate("payment", 0.9, {"blame": 0.9}, [["checkout", "payment"]],
                      suggested_tools=("query_stack_graph", "git_log", "k8s_pod_status")),
            Candidate("inventory", 0.3, {"blame": 0.3}, [["checkout", "inventory"]]),
        ],
        reason="",
    )  # fmt: skip


def firing(fingerprint: str = "fp-checkout-1", status: str = "firing") -> dict[str, Any]:
    """An Alertmanager v4 webhook body."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    body: dict[str, Any] = json.loads(
        (REPO / "examples/alerts/checkout-high-error-rate.json").read_text()
    )
    body["status"] = status
    for alert in body["alerts"]:
        alert.update(fingerprint=fingerprint, status=status, startsAt=now)
    return body


def incident(
    api_url: str, token: str, predicate: Callable[[dict[str, Any]], bool], timeout: float = 60
) -> dict[str, Any]:
    """The first incident the API lists whose detail matches, waiting for it to arrive."""
    auth = {"Authorization": f"Bearer {token}"}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for item in httpx.get(f"{api_url}/api/v1/incidents", headers=auth).json():
            detail = httpx.get(f"{api_url}/api/v1/incidents/{item['fingerprint']}",
                               headers=auth).json()  # fmt: skip
            if predicate(detail):
                return dict(detail)
        time.sleep(0.2)
    raise AssertionError("no matching incident arrived")


# -- a scripted model over HTTP (tests/sgtest.py; the fixture is in tests/conftest.py)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"function": {"name": name, "arguments": arguments}}]}
