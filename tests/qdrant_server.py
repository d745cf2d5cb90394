"""A Qdrant REST server for tests: no Qdrant server runs here, so this one answers the
real wire format (request bodies parsed into qdrant-client's own REST models, answers
dumped from them) over qdrant-client's local mode, and refuses every request whose
`api-key` header is not the configured key, as a server with `QDRANT__SERVICE__API_KEY` does.

    with qdrant_server(api_key="k") as server:
        client = QdrantClient(url=server.url, api_key="k")
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel
from qdrant_client import QdrantClient
from qdrant_client.http import models as m
from sgtest import Call, serve_http


def _dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value


class QdrantServer:
    def __init__(self, api_key: str) -> None:
        self.api_key = api_key
        self.local = QdrantClient(":memory:")
        self.lock = threading.Lock()
        self.seen: list[tuple[str, str, bool]] = []
        """(method, path, whether the right key came with it) of every request."""
        self.url = ""

    def handle(self, call: Call) -> tuple[int, Any]:
        path = call.path.split("?", 1)[0]
        authorised = call.headers.get("api-key") == self.api_key
        self.seen.append((call.method, path, authorised))
        if not authorised:
            error = "Must provide an API key or an Authorization bearer token"
            return 401, {"status": {"error": error}}
        try:
            with self.lock:
                result = self.route(call.method, path, call.body)
        except KeyError:
            return 404, {"status": {"error": f"no route {call.method} {path}"}}
        except (ValueError, TypeError, AttributeError) as exc:
            return 400, {"status": {"error": f"{type(exc).__name__}: {exc}"}}
        return 200, {"result": _dump(result), "status": "ok", "time": 0.0}

    def route(self, method: str, path: str, body: Any) -> Any:
        found = re.fullmatch(r"/collections/([^/]+)(/.*)?", path)
        if not found:
            raise KeyError(path)
        name, rest = found.group(1), found.group(2) or ""
        local = self.local
        if (method, rest) == ("GET", "/exists"):
            return {"exists": local.collection_exists(name)}
        if (method, rest) == ("GET", ""):
            return local.get_collection(name)
        if (method, rest) == ("PUT", ""):
            spec = m.CreateCollection.model_validate(body)
            return local.create_collection(
                name, vectors_config=spec.vectors, metadata=spec.metadata
            )
        if (method, rest) == ("PUT", "/points"):
            points: m.PointsList | m.PointsBatch
            if "batch" in body:
                points = m.PointsBatch.model_validate(body)
                return local.upsert(name, points=points.batch)
            points = m.PointsList.model_validate(body)
            return local.upsert(name, points=points.points)
        if (method, rest) == ("POST", "/points/scroll"):
            req = m.ScrollRequest.model_validate(body)
            found_points, offset = local.scroll(
                name, scroll_filter=req.filter, limit=req.limit or 10, offset=req.offset,
                with_payload=req.with_payload if req.with_payload is not None else True,
                with_vectors=req.with_vector or False,
            )  # fmt: skip
            return {"points": _dump(found_points), "next_page_offset": offset}
        if (method, rest) == ("POST", "/points/delete"):
            selector = m.PointIdsList.model_validate(body)
            return local.delete(name, points_selector=selector)
        if (method, rest) == ("POST", "/points/query"):
            query = m.QueryRequest.model_validate(body)
            nearest = query.query.nearest if isinstance(query.query, m.NearestQuery) else None
            return local.query_points(
                name, query=nearest, query_filter=query.filter, limit=query.limit or 10,
                with_payload=query.with_payload if query.with_payload is not None else False,
            )  # fmt: skip
        if (method, rest) == ("POST", "/points/count"):
            req_count = m.CountRequest.model_validate(body or {})
            return local.count(name, count_filter=req_count.filter)
        raise KeyError(path)


@contextmanager
def qdrant_server(api_key: str) -> Iterator[QdrantServer]:
    server = QdrantServer(api_key)
    try:
        with serve_http(handle=server.handle) as url:
            server.url = url
            yield server
    finally:
        server.local.close()
