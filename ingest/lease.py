"""The single-writer lease: a Redis key beside the graph, with expiry and renewal.

A writer that dies lets the lease lapse after its TTL; a live writer renews it from a
background thread. Release and renewal are compare-and-set, so a writer never removes a
lease another has taken over.

The writer checks the lease before every write (`check`). It stops, with `LeaseLost`,
when the lease was taken over, or when renewals have failed for so long that less than
`margin_s` of the last granted TTL is left: it stops *before* the key can expire, so no
other writer can take the lease while this one still writes.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable

import redis

from stackgraph.errors import LeaseHeldError, LeaseLost, StoreUnavailable

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

Clock = Callable[[], float]


def lease_key(graph: str) -> str:
    return f"stackgraph:{graph}:writer-lease"


class WriterLease:
    """Hold the writer lease for `graph` while in the `with` block.

    with WriterLease(conn, "stackgraph", ttl_s=60) as lease:
        lease.check()          # before each write: raises LeaseLost when no longer safe
    """

    def __init__(
        self,
        conn: redis.Redis,
        graph: str,
        ttl_s: float = 60.0,
        who: str = "",
        clock: Clock = time.monotonic,
    ) -> None:
        self.conn = conn
        self.graph = graph
        self.key = lease_key(graph)
        self.ttl_ms = int(ttl_s * 1000)
        self.margin_s = ttl_s / 4
        """Stop writing when less than this is left of the last TTL the server granted."""
        self.clock = clock
        label = who or "stackgraph"
        self.holder = f"{label}@{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._valid_until = 0.0
        self._lost: str | None = None
        self._renew_error: str | None = None

    def acquire(self) -> None:
        try:
            sent = self.clock()
            ok = self.conn.set(self.key, self.holder, nx=True, px=self.ttl_ms)
            if ok:
                self._valid_until = sent + self.ttl_ms / 1000
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
            f"another writer holds the lease on graph {self.graph!r}: {holder}{expires}"
        )

    def renew(self) -> bool:
        """One compare-and-set renewal; False (and the lease lost) when another holds it.
        A Redis error is remembered for `check`'s message and re-raised."""
        sent = self.clock()
        try:
            renewed = self.conn.eval(_RENEW, 1, self.key, self.holder, self.ttl_ms)
        except redis.RedisError as exc:
            self._renew_error = f"{type(exc).__name__}: {exc}"
            raise
        if not renewed:
            self._lost = f"the writer lease on graph {self.graph!r} was taken over or expired"
            return False
        self._valid_until = sent + self.ttl_ms / 1000
        self._renew_error = None
        return True

    def _renew_loop(self) -> None:
        interval = self.ttl_ms / 3000
        wait = interval
        while not self._stop.wait(wait):
            try:
                if not self.renew():
                    return
                wait = interval
            except redis.RedisError:
                wait = min(interval, 1.0)  # retry soon: the margin is running out
            if self._left() <= self.margin_s:
                return

    def _left(self) -> float:
        return self._valid_until - self.clock()

    def check(self) -> None:
        """Raise LeaseLost unless this writer may still write (called before each write)."""
        if self._lost is None and self._left() <= self.margin_s:
            cause = f" ({self._renew_error})" if self._renew_error else ""
            self._lost = (
                f"the writer lease on graph {self.graph!r} could not be renewed{cause}; "
                f"stopping {max(self._left(), 0):.1f} s before it expires"
            )
        if self._lost is not None:
            raise LeaseLost(f"{self._lost}; the writer stopped, nothing more was written")

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
