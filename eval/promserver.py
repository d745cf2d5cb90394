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
from typing import TextIO

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


BLOCK_S = 7_200
"""promtool cuts blocks at 2-hour boundaries and re-reads its whole input for each block."""


def split_by_block(openmetrics_path: Path, out_dir: Path) -> list[Path]:
    """The file as one OpenMetrics file per 2-hour block it touches (each with the family
    headers its samples need and its own `# EOF`), so promtool reads every sample once
    instead of once per block: backfill time grows with the samples, not with samples
    times blocks."""
    out_dir.mkdir(parents=True, exist_ok=True)
    handles: dict[int, TextIO] = {}
    header = ""
    header_in: dict[int, str] = {}
    try:
        with openmetrics_path.open(encoding="utf-8") as src:
            for line in src:
                if line.startswith("#"):
                    if line.startswith("# TYPE") or line.startswith("# HELP"):
                        header = line
                    continue
                if not line.strip():
                    continue
                block = int(float(line.rsplit(" ", 1)[1]) // BLOCK_S)
                fh = handles.get(block)
                if fh is None:
                    fh = handles[block] = (out_dir / f"block-{block}.om").open(
                        "w", encoding="utf-8"
                    )
                if header and header_in.get(block) != header:
                    fh.write(header)
                    header_in[block] = header
                fh.write(line)
    finally:
        for fh in handles.values():
            fh.write("# EOF\n")
            fh.close()
    return [out_dir / f"block-{b}.om" for b in sorted(handles)]


def backfill(openmetrics_path: Path, tsdb_dir: Path) -> None:
    """TSDB blocks in `tsdb_dir` from an OpenMetrics file (promtool, one run per 2-hour
    block). InputError with promtool's last words when it refuses the file."""
    promtool = _binary("promtool")
    tsdb_dir.mkdir(parents=True, exist_ok=True)
    cmd = [promtool, "tsdb", "create-blocks-from", "openmetrics", "--quiet"]
    parts = tsdb_dir.parent / f"{openmetrics_path.stem}-blocks"
    try:
        for part in split_by_block(openmetrics_path, parts):
            try:
                proc = subprocess.run(
                    [*cmd, str(part), str(tsdb_dir)],
                    capture_output=True,
                    text=True,
                    timeout=BACKFILL_TIMEOUT_S,
                )
            except subprocess.TimeoutExpired as exc:
                raise InputError(
                    f"promtool took over {BACKFILL_TIMEOUT_S:.0f} s to backfill {part}"
                ) from exc
            if proc.returncode != 0:
                raise InputError(
                    f"promtool could not backfill {openmetrics_path} (exit {proc.returncode}): "
                    f"{_tail(proc.stderr or proc.stdout)}"
                )
    finally:
        shutil.rmtree(parts, ignore_errors=True)


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
