"""A JSON (or text) HTTP server on 127.0.0.1 answering GETs from a function, for the
telemetry tools' failure cases and the Loki API (no Loki package exists for this machine)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

Answer = Callable[[str, dict[str, list[str]]], tuple[int, Any]]
"""(path, parsed query) -> (HTTP status, body: a str is text/plain, else JSON)."""


@contextmanager
def serve_json(answer: Answer) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urlparse(self.path)
            code, body = answer(url.path, parse_qs(url.query))
            text = body if isinstance(body, str) else json.dumps(body)
            data = text.encode()
            self.send_response(code)
            kind = "text/plain; charset=utf-8" if isinstance(body, str) else "application/json"
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
