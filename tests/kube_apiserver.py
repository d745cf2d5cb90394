"""A local HTTP server answering the Kubernetes API paths with real-shaped JSON, for tests that
drive the real `kubernetes` client (an API server cannot run here).

Routes map a path to a body: a dict is served as JSON, a str as text/plain (pod logs), a
`(code, dict)` pair as that status, a callable gets the parsed query and returns one of
those. A namespaced list path (`/api/v1/namespaces/shop/pods`) not in the routes is derived
from the cluster-wide one (`/api/v1/pods`) by `metadata.namespace`; `labelSelector`
equality terms filter list items; `paged` paths serve one item per page with `continue`.
Anything else is the API server's 404 Status.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from kubernetes import client
from sgtest import serve_http

Query = dict[str, list[str]]
Body = dict[str, Any] | str | tuple[int, dict[str, Any]]
Route = Body | Callable[[Query], Body]

NOT_FOUND: dict[str, Any] = {
    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
    "message": "the server could not find the requested resource", "reason": "NotFound",
    "code": 404,
}  # fmt: skip
_NAMESPACED = re.compile(
    r"^(?P<prefix>/api/v1|/apis/[^/]+/[^/]+)/namespaces/[^/]+/(?P<plural>[^/]+)$"
)


@dataclass
class FakeKube:
    url: str
    routes: dict[str, Route]
    paged: frozenset[str] = frozenset()
    seen: list[str] = field(default_factory=list)

    def api_client(self) -> client.ApiClient:
        config = client.Configuration()
        config.host = self.url
        return client.ApiClient(config)

    def answer(self, raw_path: str) -> tuple[int, dict[str, Any] | str]:
        self.seen.append(raw_path)
        url = urlparse(raw_path)
        query = parse_qs(url.query)
        route = self.routes.get(url.path)
        namespaced = _NAMESPACED.match(url.path)
        if route is None and namespaced:
            whole = self.routes.get(f"{namespaced['prefix']}/{namespaced['plural']}")
            if isinstance(whole, dict) and "items" in whole:
                ns = url.path.split("/namespaces/", 1)[1].split("/", 1)[0]
                items = [i for i in whole["items"] if i["metadata"].get("namespace") == ns]
                route = dict(whole, items=items)
        if route is None:
            return 404, NOT_FOUND
        body = route(query) if callable(route) else route
        if isinstance(body, tuple):
            return body
        if isinstance(body, dict) and "items" in body:
            body = _select(body, query.get("labelSelector", [""])[0])
            if url.path in self.paged:
                start = int((query.get("continue") or ["0"])[0])
                page = dict(body, items=body["items"][start : start + 1])
                if start + 1 < len(body["items"]):
                    page["metadata"] = {"resourceVersion": "42", "continue": str(start + 1)}
                body = page
        return 200, body


def _select(body: dict[str, Any], selector: str) -> dict[str, Any]:
    if not selector:
        return body
    terms = dict(term.split("=", 1) for term in selector.split(","))
    labels = [i["metadata"].get("labels", {}) for i in body["items"]]
    items = [i for i, have in zip(body["items"], labels, strict=True)
             if all(have.get(k) == v for k, v in terms.items())]  # fmt: skip
    return dict(body, items=items)


@contextmanager
def serve_kube(
    routes: Mapping[str, Route], paged: frozenset[str] = frozenset()
) -> Iterator[FakeKube]:
    """Serve `routes` on 127.0.0.1 for the duration of the block."""
    fake = FakeKube("", dict(routes), paged)
    with serve_http(fake.answer) as base:
        fake.url = base
        yield fake


def write_kubeconfig(path: Path, url: str) -> Path:
    """A kubeconfig pointing at `url` with a bearer token, as `kubectl` would read it."""
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "test",
        "clusters": [{"name": "fake", "cluster": {"server": url}}],
        "users": [{"name": "reader", "user": {"token": "t0ken"}}],
        "contexts": [{"name": "test", "context": {"cluster": "fake", "user": "reader"}}],
    }))  # fmt: skip
    return path


def kube_list(kind: str, api_version: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": kind, "apiVersion": api_version,
            "metadata": {"resourceVersion": "42"}, "items": items}  # fmt: skip
