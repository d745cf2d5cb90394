"""One write of the single writer: windows of records → chunks of rows → queries.

Records stream in windows (`GraphIngestor.window`), so memory stays bounded by a window
however many records come. Within a window they are merged, then validated by column and
serialised (`columns`) in slices of `batch_size`, each sent as soon as it is made. Queries
run on one background thread, in order, while this thread prepares the next slice: the
server's work and Python's overlap (two cores), and the server is left little to do
after the last slice. Per chunk:

- a label or relationship type that had nothing when the write began is created without
  lookups (`*_create`), unless this write already sent the same node or edge;
- otherwise phase 1 touches unchanged rows (`*_touch`, or `edge_touch_by_source` for an
  edge type without a key of its own; one count back), and only when that falls short
  does `*_pending` name the rows phase 2 merges (`*_merge`);
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
from stackgraph.schema import EDGES, LABELS, Rejection

from .columns import Prepared, prepare_edges, prepare_nodes
from .report import Counts, IngestReport
from .row_group import RowGroup
from .rows import column_text

if TYPE_CHECKING:
    from .writer import GraphIngestor

__all__ = ["WriteRun", "windows"]

T = TypeVar("T")
Progress = Callable[[int], None]
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
        written = 0
        for prepared in prepare_nodes(window, self.tag, self.report.rejected, self.w.batch_size):
            written += len(prepared)
            groups: dict[tuple[Any, ...], RowGroup] = defaultdict(RowGroup)
            for p in prepared:
                groups[p.group].entries.append(p)
            for (label, hash_tag, reference), rows in groups.items():
                target = _Target("node", label, hash_tag, label, "count_label")
                self._write_group(target, reference, rows, self.report.nodes[label])
            self._nodes_queued = True
        self._advance(len(window) - written)

    def edges(self, window: list[Any]) -> None:
        """Each slice of the window is sent as soon as it is prepared; edges whose endpoint
        does not exist are refused after the window's other rejections."""
        written, missing_ends = 0, []
        for prepared in prepare_edges(window, self.tag, self.report.rejected, self.w.batch_size):
            if self._nodes_queued:  # prepared while the nodes were written; ids need them
                self.drain()
                self._nodes_queued = False
            written += len(prepared)
            missing_ends += self._edge_slice(prepared)
        self.report.rejected += missing_ends
        self._advance(len(window) - written + len(missing_ends))

    def _edge_slice(self, prepared: list[Prepared]) -> list[Rejection]:
        """Send one slice of edges (one shape: one type and pair of endpoint labels)."""
        if sum(map(len, self.ids.values())) > _MAX_IDS:
            self.ids.clear()
        src_label, dst_label = prepared[0].ident[1][0], prepared[0].ident[2][0]
        src_ids, dst_ids = self.ids[src_label], self.ids[dst_label]
        src_keys = [p.ident[1][1] for p in prepared]
        dst_keys = [p.ident[2][1] for p in prepared]
        src, dst = list(map(src_ids.get, src_keys)), list(map(dst_ids.get, dst_keys))
        unknown = {(src_label, k) for k, a in zip(src_keys, src, strict=True) if a is None}
        unknown.update((dst_label, k) for k, b in zip(dst_keys, dst, strict=True) if b is None)
        if unknown:  # endpoints not seen before in this write
            self._resolve(unknown)
            src, dst = list(map(src_ids.get, src_keys)), list(map(dst_ids.get, dst_keys))
        ends = list(zip(src, dst, strict=True))
        gone = "source or target node does not exist"
        both = list(zip(prepared, ends, strict=True))
        rejections = [Rejection(str(p.record), "endpoint", gone, p.record.origin)
                      for p, (a, b) in both if a is None or b is None]  # fmt: skip
        found = [(p, a, b) for p, (a, b) in both if a is not None and b is not None]
        parts: dict[tuple[Any, ...], tuple[list[Prepared], list[int], list[int]]] = {}
        if len({p.group for p, _, _ in found}) == 1:  # a slice is of one shape: one group, mostly
            parts[found[0][0].group] = ([p for p, _, _ in found], [a for _, a, _ in found],
                                        [b for _, _, b in found])  # fmt: skip
        else:
            for p, a, b in found:
                part = parts.get(p.group)
                if part is None:
                    part = parts[p.group] = ([], [], [])
                part[0].append(p)
                part[1].append(a)
                part[2].append(b)
        groups = {  # a type without a key of its own has one edge per pair: grouped touch
            group: RowGroup(entries, src, dst, grouped=not EDGES[group[0]].keys)
            for group, (entries, src, dst) in parts.items()
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
                self._submit(partial(self._reference, query, chunk.light(), counts))
            return
        create = self._fresh(target.name, target.counter, rows)
        if create is None:
            self._merge_path(target, rows, counts)
            return
        query = target.render("create")
        new = rows if all(create) else rows.take(create)
        for chunk in new.chunks(self.w.batch_size):
            self._submit(partial(self._create, query, chunk.full(), counts))
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
            grouped = None if skip_touch else chunk.by_source()
            self._submit(partial(self._touch_then_merge, queries, chunk, grouped, counts,
                                 skip_touch))  # fmt: skip

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
        self, q: _Queries, chunk: RowGroup, grouped: list[str] | None, counts: Counts,
        skip_touch: bool,
    ) -> None:  # fmt: skip
        """Phase 1 (touch the unchanged), then phase 2 (merge the rest). The light rows
        are made here, and only when a grouped touch was not enough."""
        n = len(chunk.entries)
        pending: set[int] | range = range(n)
        light: list[str] | None = None
        if not skip_touch:
            if grouped is not None and q.touch_by_source is not None:
                seen = self.w._write(q.touch_by_source, self._params(grouped))
            else:
                light = chunk.light()
                seen = self.w._write(q.touch, self._params(light))
            if int(seen[0]["touched"]) == n:
                pending = set()
            else:
                light = light or chunk.light()
                found = self.w.store.read(q.pending, self._params(light))
                pending = set(found[0]["pending"]) if found else pending
        counts.unchanged += n - len(pending)
        if pending:
            light = light or chunk.light()
            props = chunk.entries
            rest = [light[i][:-1] + "," + props[i].props + "]" for i in sorted(pending)]
            out = self.w._write(q.merge, self._params(rest))[0]
            created = int(out["created"] or 0)
            counts.created += created
            counts.updated += int(out["written"]) - created
        self._advance(n)


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
