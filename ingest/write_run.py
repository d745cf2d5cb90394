"""One write of the single writer: windows of records → chunks of rows → queries.

Records stream in windows (`GraphIngestor.window`), so memory stays bounded by a window
however many records come. Within a window they are merged, validated by column and
serialised (`columns`); rows go out in chunks of `batch_size`. Queries run on one
background thread, in order, while this thread builds the next chunk: the server's work
and Python's overlap (two cores). Per chunk:

- a label or relationship type that had nothing when the write began is created without
  lookups (`*_create`), unless this write already sent the same node or edge;
- otherwise phase 1 touches unchanged rows (`*_touch`, one count back), and only when that
  falls short does `*_pending` name the rows phase 2 merges (`*_merge`);
- rows without properties only assert existence (`*_reference`).

Edge rows name their endpoints by internal node id, looked up once per distinct endpoint
(`node_ids`), not once per edge: an edge whose endpoint does not exist is refused here.
"""

from __future__ import annotations

import itertools
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from stackgraph import cypher
from stackgraph.params import Serialized
from stackgraph.schema import EDGES, Rejection

from .columns import Prepared, prepare_edges, prepare_nodes
from .report import Counts, IngestReport
from .rows import column_text

if TYPE_CHECKING:
    from .writer import GraphIngestor

__all__ = ["WriteRun", "windows"]

T = TypeVar("T")
Progress = Callable[[int], None]
Pairs = Callable[["Prepared"], tuple[int, int]]
"""An edge row's (source, target) node ids."""
_IN_FLIGHT_ROWS = 60_000
"""Rows queued for the I/O thread at most: about a window's, so the next window is
prepared while the server writes this one (bounds memory to about two windows)."""
_GROUP_MAX = 64
"""Rows of one source node a grouped touch takes at most (see `_by_source`)."""
_MAX_IDS = 2_000_000
"""Node ids kept for edge endpoints within one write."""


def windows(records: Iterable[T], size: int) -> Iterator[list[T]]:
    it = iter(records)
    while window := list(itertools.islice(it, size)):
        yield window


def _serialized(rows: Sequence[str]) -> Serialized:
    """The rows as one list parameter, already in parameter text."""
    return Serialized("[" + ",".join(rows) + "]")


class WriteRun:
    """The state of one write: which labels and types were empty, what was sent, node ids."""

    def __init__(
        self, writer: GraphIngestor, now: float, report: IngestReport,
        progress: Progress | None, tag: str | None,
    ) -> None:  # fmt: skip
        self.w = writer
        self.now = now
        self.report = report
        self.progress = progress
        self.tag = tag
        self.fresh: dict[str, bool] = {}
        self.sent: dict[str, set[int]] = defaultdict(set)
        """Per empty label / type: hashes of what this write sent (a repeat must MERGE)."""
        self.ids: dict[tuple[Any, ...], int] = {}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stackgraph-writer")
        self._queue: deque[Future[None]] = deque()
        self._in_flight = max(2, _IN_FLIGHT_ROWS // max(writer.batch_size, 1))
        self._nodes_queued = False

    # -- the I/O thread ------------------------------------------------------------------

    def _submit(self, job: Callable[[], None]) -> None:
        self.w.check_lease()
        self._queue.append(self._pool.submit(job))
        while len(self._queue) > self._in_flight:
            self._queue.popleft().result()

    def drain(self) -> None:
        while self._queue:
            self._queue.popleft().result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _advance(self, n: int) -> None:
        if self.progress and n:
            self.progress(n)

    def _params(self, rows: Sequence[str]) -> dict[str, Any]:
        return {"rows": _serialized(rows), "now": self.now}

    # -- nodes and edges ---------------------------------------------------------------

    def nodes(self, window: list[Any]) -> None:
        prepared, _ = prepare_nodes(window, self.tag, self.report.rejected)
        self._advance(len(window) - len(prepared))
        for (label, hash_tag, reference), entries in _grouped(prepared).items():
            target = _Target("node", label, hash_tag, label, "count_label")
            self._write_group(target, reference, entries, self.report.nodes[label], _keys)
        self._nodes_queued = True

    def edges(self, window: list[Any]) -> None:
        prepared, _ = prepare_edges(window, self.tag, self.report.rejected)
        self._advance(len(window) - len(prepared))
        if self._nodes_queued:  # prepared while the nodes were written; ids need them all
            self.drain()
            self._nodes_queued = False
        self._resolve(prepared)
        ends: dict[int, tuple[int, int]] = {}
        found: list[Prepared] = []
        for p in prepared:
            a = self.ids.get((p.ident[1], p.ident[2]))
            b = self.ids.get((p.ident[3], p.ident[4]))
            if a is None or b is None:
                message = "source or target node does not exist"
                self.report.rejected.append(
                    Rejection(str(p.record), "endpoint", message, p.record.origin)
                )
                self._advance(1)
                continue
            ends[id(p)] = (a, b)
            found.append(p)

        def text(p: Prepared) -> str:
            a, b = ends[id(p)]
            return f"{a},{b}," + p.keys if p.keys else f"{a},{b}"

        for (etype, src, dst, hash_tag, reference), entries in _grouped(found).items():
            target = _Target("edge", (etype, src, dst), hash_tag, etype, "count_type")
            counts = self.report.edges[etype]
            keyless = not EDGES[etype].keys  # one edge of the type per pair of nodes
            pairs = (lambda p: ends[id(p)]) if keyless else None
            self._write_group(target, reference, entries, counts, text, pairs)

    def _write_group(
        self, target: _Target, reference: bool, entries: list[Prepared], counts: Counts,
        ends: Callable[[Prepared], str], pairs: Pairs | None = None,
    ) -> None:  # fmt: skip
        """One query group: references, creates into an empty label/type, or touch+merge."""
        create, merge = self._fresh(target.name, target.counter, entries)
        if reference:  # MERGEd always; marked sent above, so no create repeats them
            query = target.render("reference")
            for chunk in self._chunks(entries):
                light = [f"[{i},{p.head},{ends(p)}]" for i, p in enumerate(chunk)]
                self._submit(partial(self._reference, query, light, counts))
            return
        query = target.render("create")
        for chunk in self._chunks(create):
            full = [f"[{i},{p.head},{ends(p)},{p.props}]" for i, p in enumerate(chunk)]
            self._submit(partial(self._create, query, full, counts))
        if merge:
            self._merge_path(target, merge, counts, ends, pairs)

    def _resolve(self, prepared: list[Prepared]) -> None:
        """Look up the ids of endpoints not seen before in this write, label by label."""
        wanted: dict[str, dict[tuple[Any, ...], None]] = defaultdict(dict)
        for p in prepared:
            for label, keys in ((p.ident[1], p.ident[2]), (p.ident[3], p.ident[4])):
                if (label, keys) not in self.ids:
                    wanted[label][keys] = None
        if len(self.ids) > _MAX_IDS:
            self.ids.clear()
        for label, keyset in wanted.items():
            keys = list(keyset)
            query = cypher.render("node_ids", label=label, key_at=1)
            for start in range(0, len(keys), self.w.batch_size):
                part = keys[start : start + self.w.batch_size]
                cols = [column_text(list(c)) for c in zip(*part, strict=True)]
                rows = [f"[{j}," + ",".join(t) + "]" for j, t in enumerate(zip(*cols, strict=True))]
                out = self.w.store.read(query, {"rows": _serialized(rows)})
                for j, node_id in out[0]["ids"] if out else []:
                    self.ids[(label, part[j])] = int(node_id)

    # -- shared --------------------------------------------------------------------------

    def _chunks(self, entries: list[Prepared]) -> Iterator[list[Prepared]]:
        size = self.w.batch_size
        for start in range(0, len(entries), size):
            yield entries[start : start + size]

    def _fresh(
        self, name: str, counter: str, entries: list[Prepared]
    ) -> tuple[list[Prepared], list[Prepared]]:
        """(to create, to merge). Create: `name` was empty when this write began, and this
        write has not sent the entry before (a repeat, or a hash collision, merges)."""
        if name not in self.fresh:
            query = cypher.render(counter, label=name) if counter == "count_label" else (
                cypher.render_type(counter, name))  # fmt: skip
            rows = self.w.store.read(query)
            self.fresh[name] = not rows or int(rows[0]["n"]) == 0
        if not self.fresh[name]:
            return [], entries
        sent = self.sent[name]
        create, merge = [], []
        for p in entries:
            h = hash(p.ident)
            if h in sent:
                merge.append(p)
            else:
                sent.add(h)
                create.append(p)
        return create, merge

    def _merge_path(
        self, target: _Target, entries: list[Prepared], counts: Counts,
        ends: Callable[[Prepared], str], pairs: Pairs | None,
    ) -> None:  # fmt: skip
        queries = _Queries(
            target.render("touch"), target.render("pending"), target.render("merge"),
            target.render("touch_by_source") if pairs else None,
        )  # fmt: skip
        skip_touch = self.fresh.get(target.name, False)  # only repeats of this write: merge
        for chunk in self._chunks(entries):
            light = [f"[{i},{p.head},{ends(p)}]" for i, p in enumerate(chunk)]
            props = [p.props for p in chunk]  # full rows are made only for what changed
            grouped = _by_source(chunk, pairs) if pairs and not skip_touch else None
            self._submit(partial(self._touch_then_merge, queries, light, props, grouped,
                                 counts, skip_touch))  # fmt: skip

    # -- jobs (I/O thread) -----------------------------------------------------------------

    def _create(self, query: cypher.Query, rows: list[str], counts: Counts) -> None:
        out = self.w._write(query, self._params(rows))
        counts.created += int(out[0]["created"] or 0) if out else 0
        self._advance(len(rows))

    def _reference(self, query: cypher.Query, rows: list[str], counts: Counts) -> None:
        out = self.w._write(query, self._params(rows))[0]
        created = int(out["created"] or 0)
        counts.created += created
        counts.unchanged += int(out["written"]) - created
        self._advance(len(rows))

    def _touch_then_merge(
        self, q: _Queries, light: list[str], props: list[str], grouped: list[str] | None,
        counts: Counts, skip_touch: bool,
    ) -> None:  # fmt: skip
        pending: set[int] | range = range(len(light))
        if not skip_touch:
            if grouped is not None and q.touch_by_source is not None:
                seen = self.w._write(q.touch_by_source, self._params(grouped))
            else:
                seen = self.w._write(q.touch, self._params(light))
            touched = int(seen[0]["touched"])
            if touched >= len(light):
                pending = set()
            else:
                found = self.w.store.read(q.pending, self._params(light))
                pending = set(found[0]["pending"]) if found else pending
        rest = [light[i][:-1] + "," + props[i] + "]" for i in sorted(pending)]
        counts.unchanged += len(light) - len(rest)
        if rest:
            out = self.w._write(q.merge, self._params(rest))[0]
            created = int(out["created"] or 0)
            counts.created += created
            counts.updated += int(out["written"]) - created
        self._advance(len(light))


@dataclass(frozen=True)
class _Queries:
    """The templates of the touch-then-merge path of one query group."""

    touch: cypher.Query
    pending: cypher.Query
    merge: cypher.Query
    touch_by_source: cypher.Query | None


def _by_source(chunk: list[Prepared], pairs: Pairs) -> list[str] | None:
    """Touch rows grouped by source node and provenance (`edge_touch_by_source`), or None
    when a source has more than `_GROUP_MAX` rows (its list is searched once per edge it
    has, so such a chunk is touched row by row)."""
    groups: dict[tuple[int, str], list[str]] = defaultdict(list)
    for p in chunk:
        a, b = pairs(p)
        digest = p.digest
        groups[(a, p.head[len(digest) + 3 :])].append(f'"{b}:{digest}"')
    if max(map(len, groups.values()), default=0) > _GROUP_MAX:
        return None
    return [f"[{a},[{','.join(targets)}],{prov}]" for (a, prov), targets in groups.items()]


@dataclass(frozen=True)
class _Target:
    """What a query group writes: a label, or an edge (type, src, dst), with its hash tag."""

    kind: str  # node | edge
    what: Any
    hash_tag: str
    name: str
    """The label or relationship type (what `_fresh` counts)."""
    counter: str

    def render(self, step: str) -> cypher.Query:
        if self.kind == "node":
            return cypher.render(f"node_{step}", label=self.what, tag=self.hash_tag)
        return cypher.render(f"edge_{step}", edge=self.what, tag=self.hash_tag)


def _keys(p: Prepared) -> str:
    return p.keys


def _grouped(prepared: list[Prepared]) -> dict[tuple[Any, ...], list[Prepared]]:
    out: dict[tuple[Any, ...], list[Prepared]] = defaultdict(list)
    for p in prepared:
        out[p.group].append(p)
    return out
