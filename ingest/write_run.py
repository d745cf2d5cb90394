"""One write of the single writer: windows of records → chunks of rows → queries.

Records stream in windows (`GraphIngestor.window`), so memory stays bounded by a window
however many records come. Within a window they are merged, then validated by column and
serialised (`columns`) in slices of `batch_size`, each sent as soon as it is made. Queries
run on two background threads (`_IO_THREADS`) while this thread prepares the next slice:
the server's work and Python's overlap (two cores), and the server is left little to do
after the last slice. Windows are written in order. Per chunk:

- a label or relationship type that had nothing when the write began is created without
  lookups (`*_create`), unless this write already sent the same node or edge;
- otherwise phase 1 touches unchanged rows (`*_touch`, or `edge_touch_by_source` for an
  edge type without a key of its own; one count back), and only when that falls short
  does `*_pending` name the rows phase 2 merges (`*_merge`);
- rows without properties only assert existence (`*_reference`).

Edge rows name their endpoints by internal node id, not by key once per edge: the node
writes return the ids of the nodes they wrote, and endpoints this write did not write are
looked up once each (`node_ids`). An edge whose endpoint does not exist is refused here.
"""

from __future__ import annotations

import itertools
import threading
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar, cast

from stackgraph import cypher
from stackgraph.params import Serialized
from stackgraph.schema import EDGES, LABELS, Rejection

from .columns import Prepared, prepare_edges, prepare_nodes
from .identity import target_keys
from .report import Counts, IngestReport
from .row_group import RowGroup
from .rows import column_text

if TYPE_CHECKING:
    from .writer import GraphIngestor

__all__ = ["WriteRun", "windows"]

T = TypeVar("T")
Progress = Callable[[int], None]
_IO_THREADS = 2
"""Queries in flight at once, each on a connection of its own: while one waits for its
reply (or for the GIL), the other keeps the server busy; FalkorDB applies the writes one at
a time. Jobs in flight together never name one node or edge: a window's records are merged
by identity, and a job naming a node or edge of an earlier window still being written
waits for that window (`_Window`)."""
_IN_FLIGHT_ROWS = 60_000
"""Rows queued for the I/O thread at most: about a window's, so Python may run that far
ahead of the server (bounds memory to about two windows)."""
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
        self.ids: dict[str, dict[Any, int]] = defaultdict(dict)
        """Node ids by label, then natural key (the value, or a tuple of values)."""
        self.rewriting: set[str] = set()
        """Merge queries whose last touch found most rows changed (set by the I/O thread):
        their next chunks' properties texts are made here, ahead, not on the I/O thread."""
        self._pool = ThreadPoolExecutor(_IO_THREADS, thread_name_prefix="stackgraph-writer")
        self._queue: deque[Future[None]] = deque()
        self._in_flight = max(2, _IN_FLIGHT_ROWS // max(writer.batch_size, 1))
        self._nodes_queued = False
        self._window_now = _Window(frozenset())
        self._earlier: list[_Window] = []
        """Earlier windows whose jobs may still run."""
        self._lock = threading.Lock()
        """Guards the report's counts and the progress callback (jobs run on two threads)."""

    # -- the I/O thread ------------------------------------------------------------------

    def _window(self, idents: AbstractSet[Any]) -> None:
        """A window begins: it waits for an earlier one still being written that names
        one of its nodes or edges (the later record is written after), not for others."""
        if self._window_now.jobs:
            self._earlier.append(self._window_now)
        self._earlier = [w for w in self._earlier if not w.done()]
        for earlier in self._earlier:
            if not idents.isdisjoint(earlier.idents):
                earlier.wait()
        self._window_now = _Window(idents)

    def _submit(self, job: Callable[[], None]) -> None:
        self.w.check_lease()
        future = self._pool.submit(job)
        self._window_now.jobs.append(future)
        self._queue.append(future)
        while len(self._queue) > self._in_flight:
            self._queue.popleft().result()

    def drain(self) -> None:
        while self._queue:
            self._queue.popleft().result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _advance(self, n: int) -> None:
        self._tally(None, done=n)

    def _tally(
        self, counts: Counts | None, created: int = 0, updated: int = 0, unchanged: int = 0,
        done: int = 0,
    ) -> None:  # fmt: skip
        with self._lock:
            if counts is not None:
                counts.created += created
                counts.updated += updated
                counts.unchanged += unchanged
            if self.progress and done:
                self.progress(done)

    def _params(self, rows: Sequence[str]) -> dict[str, Any]:
        return {"rows": _serialized(rows), "now": self.now}

    # -- nodes and edges ---------------------------------------------------------------

    def nodes(self, window: list[Any]) -> None:
        merged = prepare_nodes(window, self.tag, self.report.rejected, self.w.batch_size)
        self._window(merged.idents)
        written = 0
        for prepared in merged.slices:
            written += len(prepared)
            for (label, hash_tag, reference), at in prepared.parts.items():
                target = _Target("node", label, hash_tag, label, "count_label")
                rows = RowGroup(prepared, at)
                self._write_group(target, reference, rows, self.report.nodes[label])
            self._nodes_queued = True
        self._advance(len(window) - written)

    def edges(self, window: list[Any]) -> None:
        """Each slice of the window is sent as soon as it is prepared; edges whose endpoint
        does not exist are refused after the window's other rejections."""
        merged = prepare_edges(window, self.tag, self.report.rejected, self.w.batch_size)
        self._window(merged.idents)
        written, missing_ends = 0, []
        for prepared in merged.slices:
            if self._nodes_queued:  # prepared while the nodes were written; ids need them
                self.drain()
                self._nodes_queued = False
            written += len(prepared)
            missing_ends += self._edge_slice(prepared)
        self.report.rejected += missing_ends
        self._advance(len(window) - written + len(missing_ends))

    def _edge_slice(self, prepared: Prepared) -> list[Rejection]:
        """Send one slice of edges (one shape: one type and pair of endpoint labels)."""
        if sum(map(len, self.ids.values())) > _MAX_IDS:
            self.ids.clear()
        idents = prepared.idents
        src_label, dst_label = idents[0][1][0], idents[0][2][0]
        src_ids, dst_ids = self.ids[src_label], self.ids[dst_label]
        src_keys = [ident[1][1] for ident in idents]
        dst_keys = target_keys(idents)
        src, dst = list(map(src_ids.get, src_keys)), list(map(dst_ids.get, dst_keys))
        if None in src or None in dst:  # endpoints this write has not written
            unknown = {(src_label, k) for k, a in zip(src_keys, src, strict=True) if a is None}
            unknown.update((dst_label, k) for k, b in zip(dst_keys, dst, strict=True) if b is None)
            self._resolve(unknown)
            src, dst = list(map(src_ids.get, src_keys)), list(map(dst_ids.get, dst_keys))
        rejections: list[Rejection] = []
        parts: dict[tuple[Any, ...], tuple[Sequence[int], list[int], list[int]]] = {}
        if None not in src and None not in dst and len(prepared.parts) == 1:
            ((group, at),) = prepared.parts.items()
            parts[group] = (at, cast(list[int], src), cast(list[int], dst))
        else:
            gone = "source or target node does not exist"
            group_of: list[tuple[Any, ...]] = [()] * len(prepared)
            for group, at in prepared.parts.items():
                for j in at:
                    group_of[j] = group
            kept: dict[tuple[Any, ...], tuple[list[int], list[int], list[int]]] = {}
            for j, (a, b) in enumerate(zip(src, dst, strict=True)):
                if a is None or b is None:
                    rec = prepared.records[j]
                    rejections.append(Rejection(str(rec), "endpoint", gone, rec.origin))
                    continue
                rows_at, srcs, dsts = kept.setdefault(group_of[j], ([], [], []))
                rows_at.append(j)
                srcs.append(a)
                dsts.append(b)
            parts.update(kept)
        groups = {  # a type without a key of its own has one edge per pair: grouped touch
            group: RowGroup(prepared, at, src, dst, grouped=not EDGES[group[0]].keys)
            for group, (at, src, dst) in parts.items()
        }
        for (etype, src, dst, hash_tag, reference), rows in groups.items():
            target = _Target("edge", (etype, src, dst), hash_tag, etype, "count_type")
            self._write_group(target, reference, rows, self.report.edges[etype])
        return rejections

    def _write_group(
        self, target: _Target, reference: bool, rows: RowGroup, counts: Counts
    ) -> None:
        """One query group: references, creates into an empty label/type, or touch+merge."""
        if reference:  # MERGEd always; marked sent (when fresh), so no create repeats them
            self._fresh(target.name, target.counter, rows)
            query = target.render("reference")
            for chunk in rows.chunks(self.w.batch_size):
                job = partial(self._reference, query, chunk.light(), _node_keys(chunk), counts)
                self._submit(job)
            return
        create = self._fresh(target.name, target.counter, rows)
        if create is None:
            self._merge_path(target, rows, counts)
            return
        query = target.render("create")
        new = rows if all(create) else rows.take(create)
        for chunk in new.chunks(self.w.batch_size):
            self._submit(partial(self._create, query, chunk.full(), _node_keys(chunk), counts))
        if new is not rows:
            self._merge_path(target, rows.take([not c for c in create]), counts)

    def _resolve(self, missing: set[tuple[str, Any]]) -> None:
        """Look up the ids of nodes (by identity), label by label; a node that does not
        exist stays unknown."""
        wanted: dict[str, list[Any]] = defaultdict(list)
        for label, key in missing:
            wanted[label].append(key)
        for label, keys in wanted.items():
            query = cypher.render("node_ids", label=label, key_at=1)
            composite = len(LABELS[label].keys) > 1  # a tuple, else the bare value
            for start in range(0, len(keys), self.w.batch_size):
                part = keys[start : start + self.w.batch_size]
                if composite:
                    cols = [column_text(list(c)) for c in zip(*part, strict=True)]
                else:
                    cols = [column_text(part)]
                rows = [f"[{j}," + ",".join(t) + "]" for j, t in enumerate(zip(*cols, strict=True))]
                out = self.w.store.read(query, {"rows": _serialized(rows)})
                for j, node_id in out[0]["ids"] if out else []:
                    self.ids[label][part[j]] = int(node_id)

    # -- shared --------------------------------------------------------------------------

    def _fresh(self, name: str, counter: str, rows: RowGroup) -> list[bool] | None:
        """Which rows to create, or None when `name` had nodes or edges when this write
        began (all merge). Create: `name` was empty then, and this write has not sent the
        row's node or edge before (a repeat, or a hash collision, merges)."""
        if name not in self.fresh:
            query = cypher.render(counter, label=name) if counter == "count_label" else (
                cypher.render_type(counter, name))  # fmt: skip
            found = self.w.store.read(query)
            self.fresh[name] = not found or int(found[0]["n"]) == 0
        if not self.fresh[name]:
            return None
        sent = self.sent[name]
        hashes = list(map(hash, rows.identities()))
        if sent.isdisjoint(hashes) and len(set(hashes)) == len(hashes):  # the usual case
            sent.update(hashes)
            return [True] * len(hashes)
        create = []
        for h in hashes:
            create.append(h not in sent)
            sent.add(h)
        return create

    def _merge_path(self, target: _Target, rows: RowGroup, counts: Counts) -> None:
        queries = _Queries(
            target.render("touch"), target.render("pending"), target.render("merge"),
            target.render("touch_by_source") if rows.grouped else None,
        )  # fmt: skip
        skip_touch = self.fresh.get(target.name, False)  # only repeats of this write: merge
        for chunk in rows.chunks(self.w.batch_size):
            if skip_touch or queries.merge in self.rewriting:
                chunk.warm()
            grouped = None if skip_touch else chunk.by_source()
            job = partial(self._touch_then_merge, queries, chunk, grouped, counts, skip_touch)
            self._submit(job)

    # -- jobs (I/O thread) -----------------------------------------------------------------

    def _note_ids(self, keys: _NodeKeys | None, out: dict[str, Any]) -> None:
        """Keep the ids a node write returned (`[row index, id]` pairs), for this write's
        edges; edge writes return none."""
        pairs = out.get("ids")
        if keys is None or not pairs:
            return
        label, natural = keys
        ids = self.ids[label]
        for i, node_id in pairs:
            ids[natural[i]] = node_id

    def _create(
        self, query: cypher.Query, rows: list[str], keys: _NodeKeys | None, counts: Counts
    ) -> None:
        out = self.w._write(query, self._params(rows))
        if out:
            self._note_ids(keys, out[0])
        created = int(out[0]["created"] or 0) if out else 0
        self._tally(counts, created=created, done=len(rows))

    def _reference(
        self, query: cypher.Query, rows: list[str], keys: _NodeKeys | None, counts: Counts
    ) -> None:
        out = self.w._write(query, self._params(rows))[0]
        created = int(out["created"] or 0)
        self._note_ids(keys, out)
        self._tally(counts, created, unchanged=int(out["written"]) - created, done=len(rows))

    def _touch_then_merge(
        self, q: _Queries, chunk: RowGroup, grouped: list[str] | None, counts: Counts,
        skip_touch: bool,
    ) -> None:  # fmt: skip
        """Phase 1 (touch the unchanged), then phase 2 (merge the rest). The light rows
        are made here, and only when a grouped touch was not enough."""
        n, keys = len(chunk), _node_keys(chunk)
        pending: set[int] | range = range(n)
        light: list[str] | None = None
        if not skip_touch:
            if grouped is not None and q.touch_by_source is not None:
                seen = self.w._write(q.touch_by_source, self._params(grouped))
            else:
                light = chunk.light()
                seen = self.w._write(q.touch, self._params(light))
            self._note_ids(keys, seen[0])
            if int(seen[0]["touched"]) == n:
                pending = set()
            else:
                light = light or chunk.light()
                found = self.w.store.read(q.pending, self._params(light))
                pending = set(found[0]["pending"]) if found else pending
        created = updated = 0
        if pending:
            light = light or chunk.light()
            if 2 * len(pending) > n:  # mostly changed: the next chunks' texts are made ahead
                self.rewriting.add(q.merge)
            else:
                self.rewriting.discard(q.merge)
            rest = chunk.full(light, sorted(pending))
            out = self.w._write(q.merge, self._params(rest))[0]
            self._note_ids(keys, out)
            created = int(out["created"] or 0)
            updated = int(out["written"]) - created
        self._tally(counts, created, updated, n - len(pending), done=n)


_NodeKeys = tuple[str, list[Any]]
"""A node chunk's label and its rows' natural keys (what returned ids are filed under)."""


def _node_keys(chunk: RowGroup) -> _NodeKeys | None:
    """None for an edge chunk. A job keeps these, not the chunk, so a create's records
    can go while it waits its turn."""
    if chunk.src is not None or not len(chunk):
        return None
    idents = chunk.column(chunk.rows.idents)
    return idents[0][0], [ident[1] for ident in idents]


@dataclass
class _Window:
    """What one window has sent: the nodes or edges its jobs name, and the jobs."""

    idents: AbstractSet[Any]
    jobs: list[Future[None]] = field(default_factory=list)

    def done(self) -> bool:
        return all(job.done() for job in self.jobs)

    def wait(self) -> None:
        for job in self.jobs:
            job.result()


@dataclass(frozen=True)
class _Queries:
    """The templates of the touch-then-merge path of one query group."""

    touch: cypher.Query
    pending: cypher.Query
    merge: cypher.Query
    touch_by_source: cypher.Query | None


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
