"""The API under uvicorn in a background thread on 127.0.0.1: what the demo and the tests
that need a real HTTP server (Alertmanager, a browser) start, written once."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from fastapi import FastAPI

__all__ = ["free_port", "serve_in_thread"]


def free_port() -> int:
    """A port nobody listens on now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve_in_thread(app: FastAPI, start_timeout_s: float = 30.0) -> Iterator[str]:
    """Serve `app` for the block's duration and yield its base URL; the lifespan runs, so
    the incident workers start and stop with it."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout_s
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    if not server.started:
        server.should_exit = True
        thread.join(timeout=start_timeout_s)
        raise RuntimeError("the API did not start (see the log above)")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=start_timeout_s)
