"""The last process using the embedded FalkorDB stops it, and never one `db start` kept.

Real servers in temp data dirs; `stackgraph db start` runs as the CLI process a user runs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_cli import sg

from stackgraph.config import load_settings
from stackgraph.embedded import EmbeddedFalkorDB
from stackgraph.store import GraphStore


@pytest.fixture
def data(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "data"
    yield folder
    EmbeddedFalkorDB(folder).stop_running()


def test_a_command_stops_the_server_it_started(data: Path) -> None:
    with GraphStore.open(load_settings(None, data_dir=data)) as store:
        assert store.server is not None and store.server.owned
    assert EmbeddedFalkorDB(data).status() is None


def test_a_server_db_start_adopted_outlives_the_process_that_started_it(data: Path) -> None:
    # like `serve`: the store's process starts the server itself ...
    with GraphStore.open(load_settings(None, data_dir=data)) as store:
        assert store.server is not None and store.server.owned
        # ... then a user runs `stackgraph db start` in another shell: it reuses that server
        assert "serving" in sg("db", "start", data=data).stdout
    # the first process is done; the server `db start` asked to keep still runs
    assert EmbeddedFalkorDB(data).status() is not None
    assert "running" in sg("db", "status", data=data).stdout


def test_a_server_another_process_started_after_ours_died_is_left_alone(data: Path) -> None:
    ours = EmbeddedFalkorDB(data)
    ours.start()
    assert ours.process is not None
    os.kill(ours.process.pid, signal.SIGKILL)
    ours.process.wait()
    sg("db", "start", data=data)  # a new server for the same data dir (same socket path)
    theirs = EmbeddedFalkorDB(data).status()
    assert theirs is not None and theirs == ours.endpoint
    ours.stop()
    assert EmbeddedFalkorDB(data).status() == theirs


HOLD = """
import sys
from pathlib import Path
from stackgraph.config import load_settings
from stackgraph.store import GraphStore
with GraphStore.open(load_settings(None, data_dir=Path(sys.argv[1]))) as store:
    print("ready", store.server is not None and store.server.owned, flush=True)
    sys.stdin.readline()
    print("read", store.conn.ping(), flush=True)
"""


def test_the_server_outlives_the_process_that_started_it_while_another_uses_it(
    data: Path,
) -> None:
    """An `ingest` that started the server ends while a `serve` or `eval` still reads it:
    the server stays for them, and the last one to leave stops it."""
    with GraphStore.open(load_settings(None, data_dir=data)) as store:
        assert store.server is not None and store.server.owned
        other = subprocess.Popen([sys.executable, "-c", HOLD, str(data)], text=True,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
        assert other.stdin is not None and other.stdout is not None
        assert other.stdout.readline().split() == ["ready", "False"]  # it reused ours
    assert EmbeddedFalkorDB(data).status() is not None  # we left; it still uses the server
    other.stdin.write("go\n")
    other.stdin.flush()
    assert other.stdout.readline().split() == ["read", "True"]
    assert other.wait(timeout=60) == 0
    assert EmbeddedFalkorDB(data).status() is None  # the last user stopped it
