"""The writer lease is enforced: a writer whose renewals fail stops before the lease
expires, a taken-over lease stops it, and the store refuses a write without a held lease.

Renewals fail for real: the lease talks to the session's FalkorDB through a TCP relay that
the test cuts (connections dropped, new ones refused), as a network partition would.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import redis

from stackgraph import cypher
from stackgraph.errors import LeaseLost
from stackgraph.ingest import GraphIngestor, WriterLease
from stackgraph.schema import NodeRecord, RecordBatch
from stackgraph.store import GraphStore, connect

TTL_S = 1.2


class Relay:
    """Forwards TCP on 127.0.0.1 to the server's unix socket until `cut()`."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.open: list[socket.socket] = []
        self.cut_at: float | None = None
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            if self.closed:
                client.close()
                return
            server = socket.socket(socket.AF_UNIX)
            server.connect(self.target)
            self.open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass

    def cut(self) -> None:
        self.cut_at = time.monotonic()
        self.closed = True
        for s in [self.sock, *self.open]:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


@pytest.fixture
def relay(store: GraphStore) -> Iterator[Relay]:
    path = store.conn.connection_pool.connection_kwargs.get("path")
    assert path, "the session server listens on a unix socket"
    r = Relay(path)
    yield r
    r.cut()


def _relayed(relay: Relay) -> redis.Redis:
    return connect(host="127.0.0.1", port=relay.port, socket_timeout=0.3)


def test_unrenewable_lease_stops_the_writer_before_it_expires(
    store: GraphStore, relay: Relay
) -> None:
    one = RecordBatch([NodeRecord("Service", {"name": "a"})])
    with GraphIngestor(store, lease_ttl_s=TTL_S, who="partitioned") as writer:
        writer.write(one)
        # the lease's own connection goes through the relay; the data connection stays up
        writer.lease.release()
        writer.lease = WriterLease(_relayed(relay), store.graph_name, TTL_S, "partitioned")
        writer.lease.acquire()
        relay.cut()
        with pytest.raises(LeaseLost) as caught:
            while True:  # keeps writing until the writer refuses
                writer.write(RecordBatch([NodeRecord("Service", {"name": "b"})]))
                time.sleep(0.05)
        stopped = time.monotonic()
        left_ms = store.conn.pttl(writer.lease.key)
    message = str(caught.value)
    assert "could not be renewed" in message, message
    assert "ConnectionError" in message or "TimeoutError" in message, message
    assert left_ms > 0, "the writer must stop while its lease still exists on the server"
    assert relay.cut_at is not None and stopped - relay.cut_at < TTL_S


def test_store_refuses_a_write_under_a_lost_lease(store: GraphStore, relay: Relay) -> None:
    lease = WriterLease(_relayed(relay), store.graph_name, TTL_S, "test")
    lease.acquire()
    query = cypher.Query("CREATE (:T {v: 1})")
    store.write(query, lease=lease)
    relay.cut()
    deadline = time.monotonic() + 5 * TTL_S
    with pytest.raises(LeaseLost):
        while time.monotonic() < deadline:
            store.write(query, lease=lease)
            time.sleep(0.05)
    lease.release()
    assert store.read(cypher.Query("MATCH (t:T) RETURN count(t) AS n"))[0]["n"] >= 1


def test_taken_over_lease_stops_the_writer(store: GraphStore) -> None:
    with GraphIngestor(store, lease_ttl_s=TTL_S, who="slow") as writer:
        store.conn.set(writer.lease.key, "intruder@elsewhere:1:x", px=60_000)
        time.sleep(TTL_S / 3 + 0.3)  # one renewal round sees the other holder
        with pytest.raises(LeaseLost, match="taken over"):
            writer.write(RecordBatch([NodeRecord("Service", {"name": "a"})]))
    assert store.conn.get(writer.lease.key) == "intruder@elsewhere:1:x"  # not released by us
    assert store.read(cypher.Query("MATCH (s:Service) RETURN count(s) AS n")) in ([], [{"n": 0}])
