"""Records → rows the writer can send: deduplicated, validated once per column, serialised.

Records naming the same node or edge are merged in order (later properties win). Records
of one label (or edge type and endpoint labels) with one set of property names form a
shape, taken in slices of the writer's batch size; each column of a slice (a property, a
key part, a provenance field) is checked by the schema in one pass. A slice where any
column fails is checked record by record (`validate_node` / `validate_edge`), so a
refused record is still named with its field and origin, and the others are still
written.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import Any, TypeVar

from stackgraph.schema import (
    EDGES,
    LABELS,
    EdgeRecord,
    NodeRecord,
    Rejection,
    validate_edge,
    validate_node,
)
from stackgraph.schema.validate import column_ok, key_column_ok, names_ok, provenance_ok

from .rows import column_text, list_texts, map_texts, row_hash

__all__ = ["Prepared", "prepare_edges", "prepare_nodes"]

R = TypeVar("R", NodeRecord, EdgeRecord)
T = TypeVar("T")
_PROVENANCE = ("confidence", "source", "status")


@dataclass(slots=True)
class Prepared:
    """One valid, deduplicated record, serialised: what its rows are made of."""

    group: tuple[Any, ...]
    """Rows written by one query: (label, tag, reference) or (type, src, dst, tag, reference)."""
    ident: tuple[Any, ...]
    digest: str
    """The content hash of `props` (hex)."""
    prov: str
    """`"source","status",confidence` as parameter text."""
    keys: str
    """Node: the natural key's text; edge: its own key's text (endpoints come later)."""
    props: str
    """The properties map's text (provenance included); hashed into `digest`."""
    record: Any


_KEYS: dict[str, Callable[[Any], Any]] = {}


def key_of(label: str) -> Callable[[Any], Any]:
    """The natural key's value (one key property) or values (a tuple, in the schema's
    order) from a key mapping (KeyError if one is missing): a getter per label, made once.
    A bare value keeps a node's identity `(label, value)` flat: it is hashed on every
    endpoint lookup."""
    getter = _KEYS.get(label)
    if getter is None:
        getter = itemgetter(*LABELS[label].keys)
        _KEYS[label] = getter
    return getter


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _merge(a: R, b: R) -> R:
    """Two records of one node or edge: b's provenance, a's properties updated by b's."""
    return replace(b, props={**a.props, **b.props})


Check = Callable[[Any], list[Rejection]]


def _validated(
    shape: list[Any], fast_ok: bool, check: Check, rejected: list[Rejection]
) -> list[Any]:
    if fast_ok:
        return shape
    good = []
    for rec in shape:
        problems = check(rec)
        if problems:
            rejected.extend(problems)
        else:
            good.append(rec)
    return good


Serialised = tuple[list[str], list[str], list[str], list[str], list[str]]
"""Columns of a shape's rows: digests, provenance texts, keys texts, props texts, hash tags."""


def _serialise(
    records: list[Any], key_columns: list[list[Any]], tag: str | None,
    cols: dict[str, list[Any]],
) -> Serialised:  # fmt: skip
    """The columns (`Serialised`) of one shape's records; `cols` has the property columns
    already taken out (validation did), or not all of them."""
    sources = _strings([r.source for r in records])
    statuses = _strings([r.status for r in records])
    confidences = [r.confidence for r in records]
    if set(map(type, confidences)) != {float}:
        confidences = [float(c) for c in confidences]
    names = sorted({*records[0].props, *_PROVENANCE})
    columns: dict[str, Sequence[Any]] = {
        **cols, "source": sources, "status": statuses, "confidence": confidences,
    }  # fmt: skip
    props = map_texts(
        names, [columns[n] if n in columns else [r.props[n] for r in records] for n in names]
    )
    digests = [row_hash(p) for p in props]
    prov = list_texts((sources, statuses, confidences))
    keys = [",".join(parts) for parts in zip(*map(column_text, key_columns), strict=True)]
    if not key_columns:
        keys = [""] * len(records)
    tags = [tag] * len(records) if tag else sources
    return digests, prov, keys, props, tags


def _strings(col: list[Any]) -> list[str]:
    """`str` of each value (sources and statuses: a few distinct values, often enums)."""
    if set(map(type, col)) == {str}:
        return col
    text = {v: str(v) for v in set(col)}
    return [text[v] for v in col]


def _node_ident(rec: NodeRecord) -> tuple[Any, ...]:
    spec = LABELS.get(rec.label)
    if spec is None or len(rec.key) != len(spec.keys):
        raise KeyError(rec.label)
    return (rec.label, key_of(rec.label)(rec.key))


EdgeShape = tuple[Callable[[Any], tuple[Any, ...]], Callable[[Any], tuple[Any, ...]],
                  tuple[str, ...], int, int]  # fmt: skip
_EDGE_SHAPES: dict[tuple[str, str, str], EdgeShape | None] = {}


def _edge_shape(etype: str, src_label: str, dst_label: str) -> EdgeShape | None:
    """Key getters, own key and key sizes of an (edge type, source, target) triple, once."""
    triple = (etype, src_label, dst_label)
    if triple not in _EDGE_SHAPES:
        spec, src, dst = EDGES.get(etype), LABELS.get(src_label), LABELS.get(dst_label)
        _EDGE_SHAPES[triple] = (
            (key_of(src_label), key_of(dst_label), spec.keys, len(src.keys), len(dst.keys))
            if spec is not None and src is not None and dst is not None
            else None
        )
    return _EDGE_SHAPES[triple]


def _edge_ident(rec: EdgeRecord) -> tuple[Any, ...]:
    """(type, (src label, src key), (dst label, dst key), own key): an endpoint's pair is
    also its node's identity (`_node_ident`), the key of the writer's node-id cache."""
    src, dst = rec.src, rec.dst
    shape = _EDGE_SHAPES.get((rec.type, src.label, dst.label)) or _edge_shape(
        rec.type, src.label, dst.label
    )
    if shape is None:
        raise KeyError(rec.type)
    src_key_of, dst_key_of, own_keys, n_src, n_dst = shape
    if len(src.key) != n_src or len(dst.key) != n_dst:
        raise KeyError(rec.type)
    own = tuple(_plain(rec.props[k]) for k in own_keys) if own_keys else ()
    return (rec.type, (src.label, src_key_of(src.key)), (dst.label, dst_key_of(dst.key)), own)


def _dedupe(
    records: Sequence[R], ident_of: Callable[[R], tuple[Any, ...]], check: Check,
    rejected: list[Rejection],
) -> tuple[dict[tuple[Any, ...], R], int]:  # fmt: skip
    """Records by identity, later ones merged into earlier ones; a record whose identity
    cannot be made (unknown label, a missing or unhashable key) is refused by `check`."""
    kept: dict[tuple[Any, ...], R] = {}
    keep = kept.setdefault
    merged = 0
    for rec in records:
        try:
            ident = ident_of(rec)
            first = keep(ident, rec)
        except (KeyError, TypeError):
            rejected.extend(check(rec) or [Rejection(str(rec), "key", "is invalid")])
            continue
        if first is not rec:
            kept[ident] = _merge(first, rec)
            merged += 1
    return kept, merged


def prepare_nodes(
    records: Sequence[NodeRecord], tag: str | None, rejected: list[Rejection], size: int
) -> Iterator[list[Prepared]]:
    """Valid node records of a window, merged, then validated and serialised in slices of
    at most `size` records of one shape each (the writer sends a slice while it prepares
    the next)."""
    kept, _ = _dedupe(records, _node_ident, validate_node, rejected)
    shapes: dict[tuple[Any, ...], list[tuple[tuple[Any, ...], NodeRecord]]] = defaultdict(list)
    for ident, rec in kept.items():
        shapes[(rec.label, tuple(rec.props))].append((ident, rec))
    for (label, names), whole in shapes.items():
        spec = LABELS[label]
        for entries in _slices(whole, size):
            shape = [rec for _, rec in entries]
            cols = {n: [r.props[n] for r in shape] for n in names}
            ok = _nodes_ok(spec, names, shape, cols)
            good = _validated(shape, ok, validate_node, rejected)
            if not good:
                continue
            if good is shape:
                idents = [i for i, _ in entries]
            else:
                idents, cols = [_node_ident(r) for r in good], {}
            key_cols = [[r.key[k] for r in good] for k in spec.keys]
            rows = _serialise(good, key_cols, tag, cols)
            yield _prepared(good, idents, rows, (label,), not names)


def _slices(entries: list[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(entries), max(size, 1)):
        yield entries[start : start + size]


def _prepared(
    good: list[Any], idents: list[tuple[Any, ...]], rows: Serialised,
    group: tuple[Any, ...], reference: bool,
) -> list[Prepared]:  # fmt: skip
    """One shape's records as `Prepared`, each in its query group: `group` + (hash tag,
    reference). A reference (a shape without properties) only asserts that its node or
    edge exists."""
    digests, prov, keys, props, tags = rows
    groups = {t: (*group, t, reference) for t in set(tags)}
    return [
        Prepared(groups[t], ident, d, pv, k, p, rec)
        for rec, ident, d, pv, k, p, t in zip(
            good, idents, digests, prov, keys, props, tags, strict=True
        )
    ]


def _nodes_ok(
    spec: Any, names: tuple[str, ...], shape: list[NodeRecord], cols: dict[str, list[Any]]
) -> bool:
    if not names_ok(names, spec.keys) or not set(spec.required) <= set(names):
        return False
    for name in names:
        col = cols[name]
        if not column_ok(col):
            return False
        allowed = spec.enums.get(name)
        if allowed is not None and not all(v in allowed for v in col):
            return False
    if not all(key_column_ok([r.key[k] for r in shape]) for k in spec.keys):
        return False
    return _provenance_ok(shape)


def _provenance_ok(shape: list[Any]) -> bool:
    return provenance_ok(
        {str(v) for v in {r.source for r in shape}},
        {str(v) for v in {r.status for r in shape}},
        [r.confidence for r in shape],
    )


def prepare_edges(
    records: Sequence[EdgeRecord], tag: str | None, rejected: list[Rejection], size: int
) -> Iterator[list[Prepared]]:
    """`prepare_nodes` for edge records. `ident` is (type, (src label, src key),
    (dst label, dst key), own key)."""
    kept, _ = _dedupe(records, _edge_ident, validate_edge, rejected)
    shapes: dict[tuple[Any, ...], list[tuple[tuple[Any, ...], EdgeRecord]]] = defaultdict(list)
    for ident, rec in kept.items():
        shapes[(rec.type, rec.src.label, rec.dst.label, tuple(rec.props))].append((ident, rec))
    for (etype, src_label, dst_label, names), whole in shapes.items():
        spec = EDGES[etype]
        for entries in _slices(whole, size):
            shape = [rec for _, rec in entries]
            cols = {n: [r.props[n] for r in shape] for n in names}
            ok = _edges_ok(spec, names, shape, cols)
            good = _validated(shape, ok, validate_edge, rejected)
            if not good:
                continue
            if good is shape:
                idents = [i for i, _ in entries]
            else:
                idents, cols = [_edge_ident(r) for r in good], {}
            own_cols = [[_plain(r.props[k]) for r in good] for k in spec.keys]
            rows = _serialise(good, own_cols, tag, cols)
            yield _prepared(good, idents, rows, (etype, src_label, dst_label), not names)


def _edges_ok(
    spec: Any, names: tuple[str, ...], shape: list[EdgeRecord], cols: dict[str, list[Any]]
) -> bool:
    first = shape[0]
    if not spec.allows(first.src.label, first.dst.label) or not names_ok(names):
        return False
    if not {*spec.required, *spec.keys} <= set(names):
        return False
    if not all(column_ok(cols[n]) for n in names):
        return False
    for k in LABELS[first.src.label].keys:
        if not key_column_ok([r.src.key[k] for r in shape]):
            return False
    for k in LABELS[first.dst.label].keys:
        if not key_column_ok([r.dst.key[k] for r in shape]):
            return False
    return _provenance_ok(shape)
