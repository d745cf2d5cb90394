"""The single-writer lease: a Redis key beside the graph, with expiry and renewal.

A writer that dies lets the lease lapse after its TTL; a live writer renews it from a
background thread. Release and renewal are compare-and-set, so a writer never removes a
lease another has taken over.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid

import redis

from stackgraph.errors import LeaseHeldError, StoreUnavailable

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


def lease_key(graph: str) -> str:
    return f"stackgraph:{graph}:writer-lease"


class WriterLease:
    """Hold the writer lease for `graph` while in the `with` block."""

    def __init__(self, conn: redis.Redis, graph: str, ttl_s: float = 60.0, who: str = "") -> None:
        self.conn = conn
        self.key = lease_key(graph)
        self.ttl_ms = int(ttl_s * 1000)
        label = who or "stackgraph"
        self.holder = f"{label}@{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.lost = False

    def acquire(self) -> None:
        try:
            ok = self.conn.set(self.key, self.holder, nx=True, px=self.ttl_ms)
            if ok:
                self._thread = threading.Thread(target=self._renew_loop, daemon=True)
                self._thread.start()
                return
            raw = self.conn.get(self.key)
            holder = raw.decode() if isinstance(raw, bytes) else str(raw)
            ttl = self.conn.pttl(self.key)
        except redis.RedisError as exc:
            raise StoreUnavailable(f"cannot take the writer lease: {exc}") from exc
        expires = f", expires in {max(int(ttl), 0) / 1000:.0f} s" if ttl and int(ttl) > 0 else ""
        raise LeaseHeldError(
            f"another writer holds the lease on graph {self.key.split(':')[1]!r}: {holder}{expires}"
        )

    def _renew_loop(self) -> None:
        interval = self.ttl_ms / 3000
        while not self._stop.wait(interval):
            try:
                renewed = self.conn.eval(_RENEW, 1, self.key, self.holder, self.ttl_ms)
            except redis.RedisError:
                continue
            if not renewed:
                self.lost = True
                return

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with contextlib.suppress(redis.RedisError):
            self.conn.eval(_RELEASE, 1, self.key, self.holder)

    def __enter__(self) -> WriterLease:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def wait_for(conn: redis.Redis, graph: str, timeout_s: float) -> bool:
    """Poll until no writer holds `graph`'s lease; True if it became free."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not conn.exists(lease_key(graph)):
            return True
        time.sleep(0.2)
    return False
