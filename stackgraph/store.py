"""The graph store: one FalkorDB graph key, reached by URL or through the embedded server.

Only query text from `stackgraph.cypher` is accepted, values always travel as parameters,
and redis/FalkorDB errors are translated here into `StoreError`s that name the cause.

Two ports: `GraphReader` (read-only: lanes, the read path) has no write method at all;
writing (`write`, `drop`) takes the writer's lease, checked before every command, so only
the single writer (`stackgraph.ingest.GraphIngestor`), while it holds the lease, writes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

import redis
from falkordb import FalkorDB
from redis.backoff import NoBackoff
from redis.retry import Retry

from stackgraph.cypher import Query

from .config import Settings
from .embedded import EmbeddedFalkorDB
from .errors import StoreError, StoreUnavailable
from .params import header as params_header
from .repo_config import redact_url

SOCKET_TIMEOUT_S = 60.0
READ_RETRIES = 1
"""A read that lost its connection or timed out is sent once more; a write never is."""

_EMPTY_KEY = "empty key"
"""FalkorDB's answer to a query on a missing key: 'Invalid graph operation on empty key'."""
_WRONG_TYPE = "WRONGTYPE"


def no_retry() -> Retry:
    """redis-py re-sends a command up to 3 times after a timeout by default; a timed-out
    MERGE may still commit, so the client never retries and `GraphStore.read` retries
    reads itself."""
    return Retry(NoBackoff(), 0)


def connect(
    url: str | None = None, socket_timeout: float = SOCKET_TIMEOUT_S, **kw: Any
) -> redis.Redis:
    """A redis client (hiredis parser when installed) that never retries a command."""
    opts: dict[str, Any] = {
        "decode_responses": True,
        "socket_timeout": socket_timeout,
        "retry": no_retry(),
        **kw,
    }
    if url is not None:
        return redis.Redis.from_url(url, **opts)
    return redis.Redis(**opts)


def check(conn: redis.Redis, where: str) -> None:
    """Fail early, in one line, when the server is unreachable or is not FalkorDB."""
    try:
        conn.ping()
        modules = conn.execute_command("MODULE", "LIST")
    except redis.AuthenticationError as exc:
        raise StoreUnavailable(f"FalkorDB at {where} refused the credentials") from exc
    except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
        raise StoreUnavailable(f"cannot reach FalkorDB at {where}: {exc}") from exc
    except redis.ResponseError as exc:
        raise StoreUnavailable(f"FalkorDB at {where} answered: {exc}") from exc
    names = {str(m.get("name", "")) for m in modules if isinstance(m, dict)}
    if names and "graph" not in names:
        raise StoreUnavailable(f"the server at {where} has no FalkorDB (graph) module")


class Lease(Protocol):
    """What the store needs of the writer lease: a check that raises once it is lost."""

    def check(self) -> None: ...


def _rows(result: Any) -> list[dict[str, Any]]:
    columns = [h[1] if isinstance(h, list | tuple) else h for h in result.header]
    return [dict(zip(columns, row, strict=False)) for row in result.result_set]


class GraphReader:
    """The read-only port on one graph key: read, and no way to write. Lanes get one
    (`store.reader()`); the read path takes this type, which `GraphStore` extends.

    inputs.graph.read(cypher.load("lane_service_names"))
    """

    def __init__(self, conn: redis.Redis, graph: str, where: str, timeout_ms: int = 30_000):
        self._conn = conn
        self.graph_name = graph
        self.where = where
        self.timeout_ms = timeout_ms
        self._graph = FalkorDB(connection_pool=conn.connection_pool).select_graph(graph)

    @contextlib.contextmanager
    def _translate(self, what: str) -> Iterator[None]:
        try:
            yield
        except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
            raise StoreUnavailable(f"lost FalkorDB at {self.where} during {what}: {exc}") from exc
        except redis.ResponseError as exc:
            raise StoreError(f"{what} failed on graph {self.graph_name!r}: {exc}") from exc

    def exists(self) -> bool:
        with self._translate("graph lookup"):
            return bool(self._conn.exists(self.graph_name)) and (
                self._conn.type(self.graph_name) == "graphdata"
            )

    def read(self, query: Query, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a read-only template; rows as dicts. An absent graph (or a key that is not a
        graph) reads as empty. One round trip: the absence is FalkorDB's error, not a
        separate lookup; a read that timed out or lost its connection is sent once more."""
        text = params_header(params or {}) + query
        with self._translate("read query"):
            for attempt in range(READ_RETRIES + 1):
                try:
                    result = self._graph.ro_query(text, timeout=self.timeout_ms)
                    break
                except (redis.ConnectionError, redis.TimeoutError):
                    if attempt == READ_RETRIES:
                        raise
                except redis.ResponseError as exc:
                    message = str(exc)
                    if message.endswith(_EMPTY_KEY) or message.startswith(_WRONG_TYPE):
                        return []
                    raise
        return _rows(result)


class GraphStore(GraphReader):
    """A connection to one graph key. Use `GraphStore.open(settings)` as a context manager."""

    def __init__(
        self,
        conn: redis.Redis,
        graph: str,
        where: str,
        server: EmbeddedFalkorDB | None = None,
        timeout_ms: int = 30_000,
    ) -> None:
        super().__init__(conn, graph, where, timeout_ms)
        self.conn = conn
        self.server = server

    @classmethod
    def open(cls, settings: Settings, graph: str | None = None) -> GraphStore:
        server: EmbeddedFalkorDB | None = None
        if settings.falkordb_url:
            url = settings.falkordb_url
            if url.startswith("falkor://"):
                url = "redis://" + url[len("falkor://") :]
            elif url.startswith("falkors://"):
                url = "rediss://" + url[len("falkors://") :]
            try:
                conn = connect(url)
            except ValueError as exc:
                raise StoreUnavailable(
                    f"FALKORDB_URL {redact_url(url)!r} is not valid: {redact_url(str(exc))}"
                ) from exc
            where = redact_url(settings.falkordb_url)
        else:
            server = EmbeddedFalkorDB(settings.data_dir, settings.embedded_port)
            endpoint = server.start()
            where = f"embedded FalkorDB ({endpoint.url()})"
            if endpoint.unix_socket:
                conn = connect(unix_socket_path=endpoint.unix_socket)
            else:
                conn = connect(host="127.0.0.1", port=endpoint.port or 0)
        try:
            check(conn, where)
        except StoreError:
            conn.close()
            if server is not None:
                server.stop()
            raise
        return cls(conn, graph or settings.graph, where, server, settings.query_timeout_ms)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()
        if self.server is not None:
            self.server.stop()

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def translate(self, what: str) -> contextlib.AbstractContextManager[None]:
        """Redis errors as `StoreError`s naming the server, for the API's incident queue and
        records, which live in the same Redis (not on the lanes' read-only port)."""
        return self._translate(what)

    def reader(self) -> GraphReader:
        """The read-only port on this graph (what lanes get)."""
        return GraphReader(self.conn, self.graph_name, self.where, self.timeout_ms)

    def write(
        self, query: Query, params: Mapping[str, Any] | None = None, *, lease: Lease
    ) -> list[dict[str, Any]]:
        """Run a write template while `lease` is held (the single writer's)."""
        lease.check()
        with self._translate("write query"):
            result = self._graph.query(params_header(params or {}) + query, timeout=self.timeout_ms)
        return _rows(result)

    def copy(self, to: str, *, lease: Lease) -> GraphStore:
        """This graph copied to key `to` (FalkorDB's GRAPH.COPY), while `lease` is held:
        a sandbox the live graph never sees; drop it with a writer on the copy."""
        lease.check()
        with self._translate("graph copy"):
            if self.exists():
                self._conn.execute_command("GRAPH.COPY", self.graph_name, to)
        return GraphStore(self._conn, to, self.where)

    def drop(self, *, lease: Lease) -> None:
        """Drop this graph key only, while `lease` is held; other keys are untouched."""
        lease.check()
        with self._translate("graph delete"):
            if self.exists():
                self._graph.delete()
