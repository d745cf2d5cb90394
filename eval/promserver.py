"""A real Prometheus (Debian's) serving backfilled OpenMetrics: the replay's telemetry store,
and the tests'. The one place that starts one.

    with running_prometheus(work_dir, Path("cases.om")) as url:
        PrometheusMetrics(PrometheusClient(url)).points("api", "cpu", start, end)

`promtool tsdb create-blocks-from openmetrics` writes TSDB blocks from the file, then
`prometheus` serves them with no scrape targets and a 100 y retention: the datasets are
years old, and the default 15 d retention would delete their blocks at start-up.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from stackgraph.errors import InputError

__all__ = ["backfill", "free_port", "running_prometheus"]

NEEDS = "needs Debian's prometheus and promtool on PATH (apt-get install prometheus)"
CONFIG = "global:\n  scrape_interval: 15s\nscrape_configs: []\n"
READY_TIMEOUT_S = 300.0
"""Start-up (opening many backfilled blocks) may take a while on a loaded machine."""
STOP_TIMEOUT_S = 30.0
BACKFILL_TIMEOUT_S = 3_600.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on (at the time of asking)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise InputError(f"{name} not found: the replay {NEEDS}")
    return path


def _tail(text: str, lines: int = 5) -> str:
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])


def backfill(openmetrics_path: Path, tsdb_dir: Path) -> None:
    """TSDB blocks in `tsdb_dir` from an OpenMetrics file (promtool). InputError with
    promtool's last words when it refuses the file."""
    promtool = _binary("promtool")
    tsdb_dir.mkdir(parents=True, exist_ok=True)
    cmd = [promtool, "tsdb", "create-blocks-from", "openmetrics", "--quiet"]
    try:
        proc = subprocess.run(
            [*cmd, str(openmetrics_path), str(tsdb_dir)],
            capture_output=True,
            text=True,
            timeout=BACKFILL_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as exc:
        raise InputError(
            f"promtool took over {BACKFILL_TIMEOUT_S:.0f} s to backfill {openmetrics_path}"
        ) from exc
    if proc.returncode != 0:
        raise InputError(
            f"promtool could not backfill {openmetrics_path} (exit {proc.returncode}): "
            f"{_tail(proc.stderr or proc.stdout)}"
        )


@contextmanager
def running_prometheus(root: Path, openmetrics_path: Path) -> Iterator[str]:
    """Backfill `openmetrics_path` into `root/tsdb` (replaced if present) and serve it on a
    free port of 127.0.0.1 for the block's duration; yields the base URL. InputError when
    the binaries are missing, promtool refuses the file or Prometheus does not start."""
    prometheus = _binary("prometheus")
    _binary("promtool")
    root.mkdir(parents=True, exist_ok=True)
    tsdb = root / "tsdb"
    if tsdb.exists():
        shutil.rmtree(tsdb)
    backfill(openmetrics_path, tsdb)
    config = root / "prometheus.yml"
    config.write_text(CONFIG, encoding="utf-8")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = root / "prometheus.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [
                prometheus,
                f"--config.file={config}",
                f"--storage.tsdb.path={tsdb}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--storage.tsdb.retention.time=100y",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_ready(proc, url, log_path)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_ready(proc: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    with httpx.Client(timeout=1.0, trust_env=False) as http:  # always 127.0.0.1
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                log = log_path.read_text(encoding="utf-8", errors="replace")
                raise InputError(f"prometheus exited {proc.returncode}: {_tail(log)}")
            try:
                if http.get(f"{url}/-/ready").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
    log = log_path.read_text(encoding="utf-8", errors="replace")
    raise InputError(f"prometheus at {url} not ready after {READY_TIMEOUT_S:.0f} s: {_tail(log)}")
