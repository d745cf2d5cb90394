"""GraphStore reads in one round trip, fail-open on an absent graph; writes are never re-sent."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from sgtest import drop, leased

from stackgraph import cypher
from stackgraph.errors import StoreError, StoreUnavailable
from stackgraph.store import GraphStore, connect

COUNT = cypher.Query("MATCH (n) RETURN count(n) AS n")


def _calls(store: GraphStore) -> dict[str, int]:
    stats = store.conn.info("commandstats")
    return {k: int(v["calls"]) for k, v in stats.items() if isinstance(v, dict)}


def test_absent_graph_reads_as_empty_in_one_command(store: GraphStore) -> None:
    drop(store)
    before = _calls(store)
    assert store.read(COUNT) == []
    after = _calls(store)
    sent = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
    sent.pop("cmdstat_info", None)
    assert sent == {"cmdstat_graph.RO_QUERY": 1}  # no EXISTS/TYPE lookups before the query


def test_key_of_another_type_reads_as_empty(store: GraphStore) -> None:
    store.conn.set(store.graph_name, "not a graph")
    try:
        assert store.read(COUNT) == []
    finally:
        store.conn.delete(store.graph_name)


def test_other_query_errors_still_raise(store: GraphStore) -> None:
    with leased(store) as lease:
        store.write(cypher.Query("CREATE (:T {v: 1})"), lease=lease)
    with pytest.raises(StoreError, match="read query failed"):
        store.read(cypher.Query("MATCH (t:T) RETURN t.v / 'x' AS bad"))


class Held:
    """A lease that is always held (the silent server has no lease key to take)."""

    def check(self) -> None:
        return None


class Silent:
    """A RESP server on 127.0.0.1 that answers the handshake, then never answers a graph
    query: every GRAPH.* command received is counted, so re-sends are visible."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.graph_commands: list[str] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buf = b""
        with conn:
            while True:
                try:
                    data = conn.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                buf += data
                while True:
                    parsed = _parse(buf)
                    if parsed is None:
                        break
                    args, buf = parsed
                    name = args[0].upper()
                    if name.startswith("GRAPH."):
                        with self._lock:
                            self.graph_commands.append(name)
                    elif name == "HELLO":  # redis-py asks for RESP3
                        conn.sendall(b"%1\r\n$5\r\nproto\r\n:3\r\n")
                    else:  # CLIENT SETINFO, PING, ...
                        conn.sendall(b"+OK\r\n")

    def close(self) -> None:
        self.sock.close()


def _parse(buf: bytes) -> tuple[list[str], bytes] | None:
    """One RESP array of bulk strings from the front of `buf`, or None if incomplete."""
    if not buf.startswith(b"*") or b"\r\n" not in buf:
        return None
    head, rest = buf.split(b"\r\n", 1)
    args: list[str] = []
    for _ in range(int(head[1:])):
        if b"\r\n" not in rest:
            return None
        size_line, rest = rest.split(b"\r\n", 1)
        size = int(size_line[1:])
        if len(rest) < size + 2:
            return None
        args.append(rest[:size].decode())
        rest = rest[size + 2 :]
    return args, rest


@pytest.fixture
def silent() -> Iterator[Silent]:
    server = Silent()
    yield server
    server.close()


def test_timed_out_write_is_sent_once_and_read_twice(silent: Silent) -> None:
    conn = connect(host="127.0.0.1", port=silent.port, socket_timeout=0.2)
    store = GraphStore(conn, "g", f"127.0.0.1:{silent.port}")
    with pytest.raises(StoreUnavailable, match="write query"):
        store.write(cypher.Query("MERGE (:T {v: 1})"), lease=Held())
    assert silent.graph_commands == ["GRAPH.QUERY"]  # a MERGE that may have run is not re-sent
    with pytest.raises(StoreUnavailable, match="read query"):
        store.read(COUNT)
    assert silent.graph_commands == ["GRAPH.QUERY", "GRAPH.RO_QUERY", "GRAPH.RO_QUERY"]
    conn.close()
