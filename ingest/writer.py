"""The single writer. Nothing else writes to the graph.

Records are validated against the schema (once per column), deduplicated on their
natural keys and written in batches of `UNWIND $rows ...` in two phases: first a light
"touch" that only advances the clocks of rows whose content hash is unchanged, then a
full MERGE of the new and changed rows (a label or type that was empty is created without
MERGE). Re-ingesting unchanged sources therefore sends keys and hashes only. Records
stream through in windows (`write_stream`), so memory stays bounded (`write_run`).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from stackgraph import cypher
from stackgraph.schema import LABELS, EdgeRecord, NodeRecord, RecordBatch
from stackgraph.store import GraphStore

from .lease import WriterLease
from .report import IngestReport
from .write_run import WriteRun, windows

Clock = Callable[[], float]
Progress = Callable[[int], None]
Rows = list[dict[str, Any]]

WINDOW = 50_000
"""Records merged, validated and serialised together; bounds a write's memory."""


class GraphIngestor:
    """The only code that writes. Hold it in a `with` block: it takes the writer lease.

    with GraphStore.open(settings) as store, GraphIngestor(store) as writer:
        report = writer.write(batch)
    """

    def __init__(
        self,
        store: GraphStore,
        batch_size: int = 5000,
        lease_ttl_s: float = 60.0,
        clock: Clock = time.time,
        who: str = "",
        window: int = WINDOW,
    ) -> None:
        self.store = store
        self.batch_size = batch_size
        self.window = max(window, batch_size)
        self.clock = clock
        self.lease = WriterLease(store.conn, store.graph_name, lease_ttl_s, who)
        self._schema_applied = False

    def __enter__(self) -> GraphIngestor:
        self.lease.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.lease.release()

    def check_lease(self) -> None:
        """Raise LeaseLost unless this writer still safely holds its lease."""
        self.lease.check()

    def _write(self, query: cypher.Query, params: Mapping[str, Any] | None = None) -> Rows:
        """The one place the writer sends a write: under its lease, checked first."""
        return self.store.write(query, params, lease=self.lease)

    def copy_graph(self, to: str) -> GraphStore:
        """This graph copied to key `to` under the lease (a sandbox for the knowledge
        gates); the copy is a graph of its own, dropped by a writer on it."""
        return self.store.copy(to, lease=self.lease)

    def drop_graph(self) -> None:
        """Delete this graph key (scratch graphs of benchmarks, evals, tests) under the lease;
        the lease key goes when the writer's `with` block ends."""
        self.store.drop(lease=self.lease)
        self._schema_applied = False

    # -- schema -----------------------------------------------------------------------

    def existing_indexes(self) -> set[tuple[str, str, str]]:
        rows = self.store.read(cypher.load("index_list"))
        out: set[tuple[str, str, str]] = set()
        for row in rows:
            types = row.get("types") or {}
            for prop in row.get("properties") or []:
                kinds = types.get(prop, []) if isinstance(types, dict) else []
                for kind in kinds or ["RANGE"]:
                    out.add((row["label"], prop, str(kind).upper()))
        return out

    def apply_schema(self) -> list[str]:
        """Create missing range and full-text indexes; return what was created."""
        self.check_lease()
        have = self.existing_indexes()
        created: list[str] = []
        for spec in LABELS.values():
            for prop in (*spec.keys, *spec.indexed):
                if (spec.name, prop, "RANGE") not in have:
                    self._write(cypher.render("index_range", label=spec.name, prop=prop))
                    created.append(f"range {spec.name}.{prop}")
            for prop in spec.fulltext:
                if (spec.name, prop, "FULLTEXT") not in have:
                    self._write(cypher.render("index_fulltext", label=spec.name, prop=prop))
                    created.append(f"fulltext {spec.name}.{prop}")
        self._schema_applied = True
        return created

    # -- status -----------------------------------------------------------------------

    def mark_stale(
        self, *, source: str, cutoff: float, edge_type: str | None = None, label: str | None = None
    ) -> int:
        """Flip facts of `source` last seen before `cutoff` to Stale; returns how many."""
        self.check_lease()
        params = {"source": source, "cutoff": float(cutoff), "now": float(self.clock())}
        if edge_type is not None:
            rows = self._write(cypher.render_type("mark_stale_edges", edge_type), params)
        elif label is not None:
            rows = self._write(cypher.render("mark_stale_nodes", label=label), params)
        else:
            raise ValueError("mark_stale needs edge_type or label")
        return int(rows[0]["n"]) if rows else 0

    # -- records ----------------------------------------------------------------------

    def write(
        self, batch: RecordBatch, progress: Progress | None = None, tag: str | None = None
    ) -> IngestReport:
        """Validate and write a batch: nodes first, then edges. Invalid records are
        reported in `rejected`; the valid ones are still written. `tag` names the writer
        (the lane) whose content hash decides "unchanged"; default: the record's source."""
        report = self.write_stream(batch.nodes, batch.edges, progress, tag)
        report.rejected[:0] = batch.problems
        return report

    def write_stream(
        self,
        nodes: Iterable[NodeRecord],
        edges: Iterable[EdgeRecord],
        progress: Progress | None = None,
        tag: str | None = None,
    ) -> IngestReport:
        """`write` for records that need not all be in memory: each iterable is read in
        windows of `window` records (all nodes before any edge). Records naming the same
        node or edge are merged within a window; across windows the later one wins too,
        as a second write of it."""
        if not self._schema_applied:
            self.apply_schema()
        report = IngestReport()
        run = WriteRun(self, float(self.clock()), report, progress, tag)
        collecting = gc.isenabled()
        gc.disable()  # a write makes ~10 objects per record and no cycles; each full
        try:  # collection would walk every live record again (half the Python time)
            for node_window in windows(nodes, self.window):
                run.nodes(node_window)
            # edges find their endpoints by id: `run.edges` waits for every node write,
            # after preparing its first window (which overlaps the nodes' writes)
            for edge_window in windows(edges, self.window):
                run.edges(edge_window)
            run.drain()
        finally:
            run.close()
            if collecting:
                gc.enable()
        return report
