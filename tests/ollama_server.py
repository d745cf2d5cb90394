"""Ollama's `/api/embed` for tests (no model server runs here): the real wire format,
deterministic vectors of a chosen size, and a record of the model each request named."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class FakeOllama:
    url: str
    models: list[str] = field(default_factory=list)
    """The `model` of every embed request, in order."""


@contextmanager
def ollama_server(dim: int = 1024) -> Iterator[FakeOllama]:
    fake = FakeOllama("")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            fake.models.append(body["model"])
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            vectors = [[0.01 * (i + 1)] * dim for i in range(len(texts))]
            data = json.dumps({"model": body["model"], "embeddings": vectors}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    fake.url = f"http://127.0.0.1:{server.server_port}"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
