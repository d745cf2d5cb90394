"""The single writer. Nothing else writes to the graph.

Records are validated against the schema, deduplicated on their natural keys and written
in batches of `UNWIND $rows ... MERGE` in two phases: first a light "touch" that only
advances the clocks of rows whose content hash is unchanged, then a full MERGE of the new
and changed rows. Re-ingesting unchanged sources therefore sends keys and hashes only.
"""

from __future__ import annotations

import hashlib
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from stackgraph import cypher
from stackgraph.schema import (
    EDGES,
    LABELS,
    EdgeRecord,
    NodeRecord,
    RecordBatch,
    Rejection,
    validate_edge,
    validate_node,
)
from stackgraph.store import GraphStore

from .lease import WriterLease

Clock = Callable[[], float]
_T = TypeVar("_T")
_R = TypeVar("_R", NodeRecord, EdgeRecord)
Progress = Callable[[int], None]
Rows = list[dict[str, Any]]


@dataclass
class Counts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0

    @property
    def total(self) -> int:
        return self.created + self.updated + self.unchanged


@dataclass
class IngestReport:
    """Per-label and per-type outcome of one write, plus every refused record."""

    nodes: dict[str, Counts] = field(default_factory=lambda: defaultdict(Counts))
    edges: dict[str, Counts] = field(default_factory=lambda: defaultdict(Counts))
    rejected: list[Rejection] = field(default_factory=list)
    stale: dict[str, int] = field(default_factory=dict)
    """What lanes' post-write hooks flipped to Stale, per edge type or label."""

    def merge(self, other: IngestReport) -> None:
        for mine, theirs in ((self.nodes, other.nodes), (self.edges, other.edges)):
            for name, c in theirs.items():
                m = mine[name]
                m.created += c.created
                m.updated += c.updated
                m.unchanged += c.unchanged
        self.rejected.extend(other.rejected)
        self.add_stale(other.stale)

    def add_stale(self, counts: Mapping[str, int]) -> None:
        for name, n in counts.items():
            self.stale[name] = self.stale.get(name, 0) + int(n)

    def as_dict(self) -> dict[str, Any]:
        def table(d: Mapping[str, Counts]) -> dict[str, dict[str, int]]:
            return {
                k: {"created": c.created, "updated": c.updated, "unchanged": c.unchanged}
                for k, c in sorted(d.items())
            }

        out: dict[str, Any] = {
            "nodes": table(self.nodes),
            "edges": table(self.edges),
            "rejected": [str(r) for r in self.rejected],
        }
        if self.stale:
            out["stale"] = dict(sorted(self.stale.items()))
        return out


def content_hash(props: Mapping[str, Any]) -> str:
    """Stable digest of what a record sets; equal hashes mean the SET would change nothing.

    `repr` of sorted items is stable across processes for the scalar and list values the
    schema allows (floats repr shortest-round-trip) and is 3x cheaper than json.dumps."""
    blob = repr(sorted(props.items()))
    return hashlib.blake2b(blob.encode("utf-8"), digest_size=10).hexdigest()


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _node_payload(node: NodeRecord) -> dict[str, Any]:
    props = {k: _plain(v) for k, v in node.props.items()}
    props |= {"source": str(node.source), "status": str(node.status)}
    props["confidence"] = float(node.confidence)
    return props


def _edge_payload(edge: EdgeRecord) -> dict[str, Any]:
    props = {k: _plain(v) for k, v in edge.props.items()}
    props |= {"source": str(edge.source), "status": str(edge.status)}
    props["confidence"] = float(edge.confidence)
    return props


def _dedupe_nodes(nodes: Iterable[NodeRecord]) -> dict[tuple[str, tuple[Any, ...]], dict[str, Any]]:
    """Records naming the same node are merged in order (later properties win)."""
    out: dict[tuple[str, tuple[Any, ...]], dict[str, Any]] = {}
    for node in nodes:
        spec = LABELS[node.label]
        ident = (node.label, tuple(node.key[k] for k in spec.keys))
        merged = out.setdefault(ident, {})
        merged.update(_node_payload(node))
    return out


EdgeIdent = tuple[str, str, tuple[Any, ...], str, tuple[Any, ...], tuple[Any, ...]]


def _dedupe_edges(
    edges: Iterable[EdgeRecord],
) -> dict[EdgeIdent, tuple[dict[str, Any], EdgeRecord]]:
    out: dict[EdgeIdent, tuple[dict[str, Any], EdgeRecord]] = {}
    for edge in edges:
        spec = EDGES[edge.type]
        src_keys = tuple(edge.src.key[k] for k in LABELS[edge.src.label].keys)
        dst_keys = tuple(edge.dst.key[k] for k in LABELS[edge.dst.label].keys)
        own = tuple(_plain(edge.props[k]) for k in spec.keys)
        ident = (edge.type, edge.src.label, src_keys, edge.dst.label, dst_keys, own)
        previous = out.get(ident)
        payload = _edge_payload(edge)
        out[ident] = ({**previous[0], **payload} if previous else payload, edge)
    return out


def _valid(
    records: Iterable[_R],
    check: Callable[[_R], list[Rejection]],
    report: IngestReport,
    progress: Progress | None,
) -> list[_R]:
    """The records `check` accepts; the refused ones go to the report (and the progress)."""
    good: list[_R] = []
    for record in records:
        problems = check(record)
        if problems:
            report.rejected.extend(problems)
            if progress:
                progress(1)
        else:
            good.append(record)
    return good


_PROVENANCE_KEYS = frozenset({"source", "status", "confidence"})


def _is_reference(props: Mapping[str, Any]) -> bool:
    """A record that carries nothing but provenance only asserts existence."""
    return props.keys() <= _PROVENANCE_KEYS


def _provenance_row(props: Mapping[str, Any]) -> dict[str, Any]:
    return {"s": props["source"], "st": props["status"], "c": props["confidence"]}


def _chunks(rows: Sequence[dict[str, Any]], size: int) -> Iterable[Sequence[dict[str, Any]]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


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
    ) -> None:
        self.store = store
        self.batch_size = batch_size
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
            for prop in spec.keys:
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
        if not self._schema_applied:
            self.apply_schema()
        report = IngestReport()
        report.rejected.extend(batch.problems)
        now = float(self.clock())
        good_nodes = _valid(batch.nodes, validate_node, report, progress)
        good_edges = _valid(batch.edges, validate_edge, report, progress)
        self._write_nodes(good_nodes, now, report, progress, tag)
        self._write_edges(good_edges, now, report, progress, tag)
        return report

    def _count(self, query: cypher.Query) -> int:
        rows = self.store.read(query)
        return int(rows[0]["n"]) if rows else 0

    def _write_nodes(
        self,
        nodes: list[NodeRecord],
        now: float,
        report: IngestReport,
        progress: Progress | None,
        tag: str | None,
    ) -> None:
        merged = _dedupe_nodes(nodes)
        if progress and len(merged) < len(nodes):
            progress(len(nodes) - len(merged))
        # (label, hash tag, reference?) -> rows
        groups: dict[tuple[str, str, bool], list[dict[str, Any]]] = defaultdict(list)
        for (label, keys), props in sorted(merged.items(), key=lambda kv: repr(kv[0])):
            row: dict[str, Any] = {f"k{i}": v for i, v in enumerate(keys)}
            row |= _provenance_row(props)
            row["h"] = content_hash(props)
            row["p"] = props
            group = groups[(label, tag or props["source"], _is_reference(props))]
            row["i"] = len(group)
            group.append(row)
        for label, hash_tag, reference in sorted(groups):
            rows = groups[(label, hash_tag, reference)]
            counts = report.nodes[label]
            if reference:
                query = cypher.render("node_reference", label=label)
                for chunk in _chunks(rows, self.batch_size):
                    self.check_lease()
                    light = [{k: v for k, v in r.items() if k not in ("p", "h")} for r in chunk]
                    out = self._write(query, {"rows": light, "now": now})[0]
                    created = int(out["created"] or 0)
                    counts.created += created
                    counts.unchanged += len(chunk) - created
                    if progress:
                        progress(len(chunk))
                continue
            # an empty label has nothing to touch: skip phase 1 (the first ingest)
            fresh = self._count(cypher.render("count_label", label=label)) == 0
            touch_q = cypher.render("node_touch", label=label, tag=hash_tag)
            pending_q = cypher.render("node_pending", label=label, tag=hash_tag)
            merge_q = cypher.render("node_merge", label=label, tag=hash_tag)
            for chunk in _chunks(rows, self.batch_size):
                self.check_lease()
                rest: Sequence[dict[str, Any]] = chunk
                if not fresh:
                    light = [{k: v for k, v in r.items() if k != "p"} for r in chunk]
                    rest = self._pending(touch_q, pending_q, light, now, chunk)
                counts.unchanged += len(chunk) - len(rest)
                if rest:
                    out = self._write(merge_q, {"rows": rest, "now": now})[0]
                    created = int(out["created"] or 0)
                    counts.created += created
                    counts.updated += int(out["written"]) - created
                if progress:
                    progress(len(chunk))

    def _write_edges(
        self,
        edges: list[EdgeRecord],
        now: float,
        report: IngestReport,
        progress: Progress | None,
        tag: str | None,
    ) -> None:
        merged = _dedupe_edges(edges)
        if progress and len(merged) < len(edges):
            progress(len(edges) - len(merged))
        # type, src label, dst label, hash tag, reference?
        GroupKey = tuple[str, str, str, str, bool]
        groups: dict[GroupKey, list[tuple[dict[str, Any], EdgeRecord]]] = defaultdict(list)
        for ident, (props, record) in sorted(merged.items(), key=lambda kv: repr(kv[0])):
            etype, src_label, src_keys, dst_label, dst_keys, own = ident
            row: dict[str, Any] = {f"s{i}": v for i, v in enumerate(src_keys)}
            row |= {f"d{i}": v for i, v in enumerate(dst_keys)}
            row |= {f"e{i}": v for i, v in enumerate(own)}
            row |= _provenance_row(props)
            row["h"] = content_hash(props)
            row["p"] = props
            key = (etype, src_label, dst_label, tag or props["source"], _is_reference(props))
            group = groups[key]
            row["i"] = len(group)
            group.append((row, record))
        fresh_types = {
            etype: self._count(cypher.render_type("count_type", etype)) == 0
            for etype in {g[0] for g in groups}
        }
        for group_key in sorted(groups):
            entries = groups[group_key]
            etype, src_label, dst_label, hash_tag, reference = group_key
            edge = (etype, src_label, dst_label)
            counts = report.edges[etype]
            touch_q = cypher.render("edge_touch", edge=edge, tag=hash_tag)
            pending_q = cypher.render("edge_pending", edge=edge, tag=hash_tag)
            merge_q = cypher.render("edge_merge", edge=edge, tag=hash_tag)
            ref_q = cypher.render("edge_reference", edge=edge)
            for start in range(0, len(entries), self.batch_size):
                self.check_lease()
                chunk = entries[start : start + self.batch_size]
                if reference:
                    light = [{k: v for k, v in r.items() if k not in ("p", "h")} for r, _ in chunk]
                    out = self._write(ref_q, {"rows": light, "now": now})[0]
                    written, created = int(out["written"]), int(out["created"] or 0)
                    counts.created += created
                    counts.unchanged += written - created
                    if written < len(chunk):
                        self._reject_missing(edge, chunk, report)
                    if progress:
                        progress(len(chunk))
                    continue
                rest = chunk
                if not fresh_types[etype]:
                    light = [{k: v for k, v in r.items() if k != "p"} for r, _ in chunk]
                    rest = self._pending(touch_q, pending_q, light, now, chunk)
                counts.unchanged += len(chunk) - len(rest)
                if rest:
                    rows = [r for r, _ in rest]
                    out = self._write(merge_q, {"rows": rows, "now": now})[0]
                    written, created = int(out["written"]), int(out["created"] or 0)
                    counts.created += created
                    counts.updated += written - created
                    if written < len(rows):
                        self._reject_missing(edge, rest, report)
                if progress:
                    progress(len(chunk))

    def _pending(
        self,
        touch_q: cypher.Query,
        pending_q: cypher.Query,
        light: list[dict[str, Any]],
        now: float,
        chunk: Sequence[_T],
    ) -> list[_T]:
        """Touch the unchanged rows; return the chunk's entries phase 2 must write. The
        common re-ingest (everything unchanged) costs one query that returns one number."""
        touched = int(self._write(touch_q, {"rows": light, "now": now})[0]["touched"])
        if touched == len(light):
            return []
        found = self.store.read(pending_q, {"rows": light})
        pending = set(found[0]["pending"]) if found else {r["i"] for r in light}
        return [entry for entry, row in zip(chunk, light, strict=True) if row["i"] in pending]

    def _reject_missing(
        self,
        edge: tuple[str, str, str],
        rest: Sequence[tuple[dict[str, Any], EdgeRecord]],
        report: IngestReport,
    ) -> None:
        keys = [{k: v for k, v in r.items() if k[0] in "sdi"} for r, _ in rest]
        found = self.store.read(cypher.render("edge_missing", edge=edge), {"rows": keys})
        missing = set(found[0]["missing"]) if found else set()
        for row, record in rest:
            if row["i"] in missing:
                report.rejected.append(
                    Rejection(
                        str(record), "endpoint", "source or target node does not exist",
                        record.origin,
                    )
                )  # fmt: skip
