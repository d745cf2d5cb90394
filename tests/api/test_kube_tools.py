"""Kubernetes tools through the real `kubernetes` client against a fake API server that
speaks the real wire format (a Kubernetes API server cannot run here)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from kubernetes import client

from stackgraph.rca.agent import ToolContext, ToolStatus, Verdict, call_tool, default_tools

PODS: dict[str, Any] = {
    "kind": "PodList", "apiVersion": "v1", "metadata": {},
    "items": [{
        "metadata": {"name": "payment-7c9f-abcde", "namespace": "shop"},
        "status": {"phase": "Running", "containerStatuses": [{
            "name": "app", "image": "payment:1.4.2", "imageID": "", "ready": False,
            "restartCount": 4,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}},
        }]},
    }],
}  # fmt: skip


@pytest.fixture
def kube() -> Iterator[tuple[Any, list[str]]]:
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            url = urlparse(self.path)
            selector = parse_qs(url.query).get("labelSelector", [""])[0]
            body: dict[str, Any] = {"kind": "PodList", "apiVersion": "v1", "metadata": {},
                                    "items": []}  # fmt: skip
            if url.path == "/api/v1/namespaces/shop/pods" and selector.endswith("=payment"):
                body = PODS
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    config = client.Configuration()
    config.host = f"http://127.0.0.1:{server.server_address[1]}"
    yield client.ApiClient(config), seen
    server.shutdown()
    server.server_close()


def test_pod_status_supports_a_crashing_service(kube: tuple[Any, list[str]]) -> None:
    api, seen = kube
    tool = default_tools()["k8s_pod_status"]
    ctx = ToolContext(kube=api, kube_namespace="shop")
    result = call_tool(tool, ctx, {"service": "payment"})
    assert result.status == ToolStatus.SUCCESS
    assert "NOT ready, 4 restarts (CrashLoopBackOff, OOMKilled)" in result.summary
    assert tool.check(result, "payment", 0.0, 1800.0) == Verdict.SUPPORTS
    assert "labelSelector=app.kubernetes.io/name%3Dpayment" in seen[0]
    empty = call_tool(tool, ctx, {"service": "cart"})
    assert empty.status == ToolStatus.NO_DATA
    assert tool.check(empty, "cart", 0.0, 1800.0) == Verdict.INCONCLUSIVE


def test_without_a_cluster_the_tool_is_unavailable_not_an_error() -> None:
    tool = default_tools()["k8s_pod_status"]
    status = tool.status(ToolContext())
    assert not status.enabled and "Kubernetes cluster" in status.reason
    result = call_tool(tool, ToolContext(), {"service": "payment"})
    assert result.status == ToolStatus.UNAVAILABLE
