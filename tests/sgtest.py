"""Helpers every test folder shares (a module of its own: several folders have a conftest)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
IN_CI = os.environ.get("CI", "").lower() == "true"
# Read at import time: the root conftest's autouse fixture clears STACKGRAPH_* for each test.
DATASETS = Path(os.environ.get("STACKGRAPH_DATASETS") or REPO.parent / "shared" / "datasets")
"""The shared labelled datasets: ``$STACKGRAPH_DATASETS`` or ``<repo>/../shared/datasets``."""


def package_dirs() -> dict[str, Path]:
    """Import prefix → source folder of the one installed package (pyproject's
    `package-dir`: `stackgraph.rca` is `rca/`, and so on)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    mapping = config["tool"]["setuptools"]["package-dir"]
    return {name: REPO / folder for name, folder in mapping.items()}


def require(condition: bool, what: str) -> None:
    """Skip when a component is missing locally; in CI a missing component is a failure."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"{what} is required in CI (make test installs it)")
    pytest.skip(f"{what} is not available")


def stackgraph_cli(
    settings: Any, *args: str, ok: bool = True, env: Mapping[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """`python -m stackgraph ARGS` as a user runs it, on the test's FalkorDB, graph and data
    dir (no other STACKGRAPH_ setting of the environment leaks in); `env` on top."""
    assert settings.falkordb_url
    test_env = {"FALKORDB_URL": str(settings.falkordb_url), "STACKGRAPH_GRAPH": settings.graph,
                "STACKGRAPH_DATA_DIR": str(settings.data_dir), **(env or {})}  # fmt: skip
    return run_cli(*args, env=test_env, ok=ok, timeout=timeout)


def run_cli(
    *args: str, data: Path | None = None, env: Mapping[str, str] | None = None,
    unset: tuple[str, ...] = (), ok: bool = True, timeout: float = 300,
) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """`python -m stackgraph ARGS` as a user runs it: no STACKGRAPH_ setting of this
    environment leaks in, and no FALKORDB_URL (an embedded server, in `data`) unless `env`
    names one; `unset` drops more (a cluster's, a model's). `ok`: the exit code must be 0."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("STACKGRAPH_")}
    for var in ("FALKORDB_URL", *unset):
        full.pop(var, None)
    full |= {"COLUMNS": "200", "OPENBLAS_NUM_THREADS": "1"}
    if data is not None:
        full["STACKGRAPH_DATA_DIR"] = str(data)
    full |= env or {}
    proc = subprocess.run([sys.executable, "-m", "stackgraph", *args], capture_output=True,
                          text=True, env=full, timeout=timeout)  # fmt: skip
    if ok:
        assert proc.returncode == 0, proc.stderr + proc.stdout
    return proc


def dataset_folder(name: str) -> Path:
    """A shared dataset's folder; skip when absent, unless CI=true (then fail)."""
    folder = DATASETS / name
    if not folder.is_dir():
        if IN_CI:
            pytest.fail(f"dataset folder {folder} missing (CI=true)")
        pytest.skip(f"dataset folder {folder} not present")
    return folder


RawAnswer = Callable[[str], tuple[int, Any]]
"""raw request path (with its query) -> (HTTP status, body: a str is text/plain, else JSON)."""
PostAnswer = Callable[[str, Any], tuple[int, Any]]
"""(path, the JSON body) -> (HTTP status, body), as RawAnswer."""


@dataclass(frozen=True)
class Call:
    """One request as a fake API sees it."""

    method: str
    path: str
    """The raw path, with its query."""
    body: Any
    """The JSON body (None when there is none)."""
    headers: Mapping[str, str]
    """Header names lower-cased."""


Handle = Callable[[Call], tuple[int, Any]]
"""Any request -> (HTTP status, body), as RawAnswer."""


def _not_found(path: str, *_: Any) -> tuple[int, Any]:
    return 404, f"no route {path}"


def _by_method(answer: RawAnswer, post: PostAnswer) -> Handle:
    def handle(call: Call) -> tuple[int, Any]:
        if call.method == "GET":
            return answer(call.path)
        if call.method == "POST":
            return post(call.path, call.body)
        return 405, f"no {call.method} here"

    return handle


@contextmanager
def serve_http(
    answer: RawAnswer = _not_found, post: PostAnswer = _not_found, handle: Handle | None = None
) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 answering GETs from `answer` and JSON POSTs from
    `post` (or every method from `handle`), for the block's duration; yields its base URL.
    The one fake for APIs that cannot run here speaks their wire format."""
    route = handle or _by_method(answer, post)

    class Handler(BaseHTTPRequestHandler):
        def _send(self, code: int, body: Any) -> None:
            text = body if isinstance(body, str) else json.dumps(body)
            data = text.encode()
            try:
                self.send_response(code)
                kind = "text/plain; charset=utf-8" if isinstance(body, str) else "application/json"
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the asking process went away mid-call (a test may mean it)

        def _route(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(size) or b"null") if size else None
            headers = {k.lower(): v for k, v in self.headers.items()}
            call = Call(self.command, self.path, body, headers)
            self._send(*route(call))

        do_GET = do_POST = do_PUT = do_DELETE = _route

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


CHROMIUM = Path("/usr/bin/chromium")
"""Debian's chromium (scripts/system-deps.sh); Playwright's own browser download cannot run
here, so Playwright is pointed at this binary."""
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]  # fmt: skip


@contextmanager
def chromium(profile: Path) -> Iterator[Any]:
    """A Playwright browser context on Debian's chromium with a fresh profile in `profile`
    (for the web UI tests and `make screenshots`)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True,
            viewport={"width": 1280, "height": 900},
        )  # fmt: skip
        try:
            yield context
        finally:
            context.close()


def drop(store: Any) -> None:
    """Delete a test's graph key the product's way: through the writer, under its lease."""
    from stackgraph.ingest import GraphIngestor

    with GraphIngestor(store, who="test") as writer:
        writer.drop_graph()


def write_calls(store: Any, calls: list[tuple[str, str]]) -> None:
    """Services calling each other (`CALLS`, as Tempo's service graph gives them), through
    the writer."""
    from stackgraph.ingest import GraphIngestor
    from stackgraph.schema import EdgeRecord, NodeRecord, NodeRef, RecordBatch

    names = sorted({n for pair in calls for n in pair})
    batch = RecordBatch(
        nodes=[NodeRecord("Service", {"name": n}) for n in names],
        edges=[EdgeRecord("CALLS", NodeRef("Service", {"name": a}), NodeRef("Service", {"name": b}),
                          {}, "Tempo") for a, b in calls],
    )  # fmt: skip
    with GraphIngestor(store, who="test") as writer:
        assert not writer.write(batch).rejected


@contextmanager
def leased(store: Any) -> Iterator[Any]:
    """The writer lease on `store`'s graph, for tests that send a raw write template."""
    from stackgraph.ingest import WriterLease

    with WriterLease(store.conn, store.graph_name, who="test") as lease:
        yield lease


@dataclass
class ScriptedModel:
    """Answers POST /api/chat with the next scripted assistant message (the last repeats).
    While `hold` is set to an unset Event, replies wait for it (an investigation caught in
    mid-flight); each reply takes at least `delay_s`; `asked` is set by every request."""

    script: list[dict[str, Any]]
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""
    hold: threading.Event | None = None
    delay_s: float = 0.0
    asked: threading.Event = field(default_factory=threading.Event)

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(body)
        self.asked.set()
        if self.hold is not None:
            self.hold.wait(120)
        time.sleep(self.delay_s)
        message = self.script[min(len(self.requests) - 1, len(self.script) - 1)]
        return {"model": body.get("model", "m"), "created_at": "2026-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": "", **message},
                "done": True, "done_reason": "stop"}  # fmt: skip
