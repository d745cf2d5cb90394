"""A JSON (or text) HTTP server on 127.0.0.1 answering GETs from a function, for the
telemetry tools' failure cases and the Loki API (no Loki package exists for this machine)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs, urlparse

from sgtest import serve_http

Answer = Callable[[str, dict[str, list[str]]], tuple[int, Any]]
"""(path, parsed query) -> (HTTP status, body: a str is text/plain, else JSON)."""


@contextmanager
def serve_json(answer: Answer) -> Iterator[str]:
    def raw(path: str) -> tuple[int, Any]:
        url = urlparse(path)
        return answer(url.path, parse_qs(url.query))

    with serve_http(raw) as base:
        yield base
