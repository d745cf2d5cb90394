"""Which node or edge a record names, and a window's records merged by it.

A node is named by `(label, key)`, an edge by `(type, (src label, src key), (dst label,
dst key), own key)`; a key is the natural key's value, or a tuple of values when the
label's key has several properties (a flat identity is cheaper to hash, and it is hashed
on every endpoint lookup). Records naming the same node or edge within a window are merged
in order (later properties win, the later provenance stands). Records are grouped into
shapes: one label (or edge type and endpoint labels) with one set of property names.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from itertools import repeat
from operator import attrgetter, itemgetter
from typing import Any, TypeVar

from stackgraph.schema import EDGES, LABELS, EdgeRecord, NodeRecord, Rejection

__all__ = [
    "Merged",
    "Shapes",
    "edge_ident",
    "edge_shapes",
    "node_ident",
    "node_shapes",
    "plain",
    "target_keys",
]

R = TypeVar("R", NodeRecord, EdgeRecord)
Check = Callable[[Any], list[Rejection]]
Shapes = dict[tuple[Any, ...], tuple[list[tuple[Any, ...]], list[Any]]]
"""Shape key → (identities, records), both in window order. A node shape's key is
(label, property names); an edge shape's (type, src label, dst label, property names)."""

_KEYS: dict[str, Callable[[Any], Any]] = {}


def key_of(label: str) -> Callable[[Any], Any]:
    """The natural key's value (one key property) or values (a tuple, in the schema's
    order) from a key mapping (KeyError if one is missing): a getter per label, made once."""
    getter = _KEYS.get(label)
    if getter is None:
        getter = itemgetter(*LABELS[label].keys)
        _KEYS[label] = getter
    return getter


def plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _merge(a: R, b: R) -> R:
    """Two records of one node or edge: b's provenance, a's properties updated by b's."""
    return replace(b, props={**a.props, **b.props})


def node_ident(rec: NodeRecord) -> tuple[Any, ...]:
    spec = LABELS.get(rec.label)
    if spec is None or len(rec.key) != len(spec.keys):
        raise KeyError(rec.label)
    return (rec.label, key_of(rec.label)(rec.key))


EdgeShape = tuple[Callable[[Any], Any], Callable[[Any], Any], tuple[str, ...], int, int]
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


def edge_ident(rec: EdgeRecord) -> tuple[Any, ...]:
    src, dst = rec.src, rec.dst
    shape = _EDGE_SHAPES.get((rec.type, src.label, dst.label)) or _edge_shape(
        rec.type, src.label, dst.label
    )
    if shape is None:
        raise KeyError(rec.type)
    src_key_of, dst_key_of, own_keys, n_src, n_dst = shape
    if len(src.key) != n_src or len(dst.key) != n_dst:
        raise KeyError(rec.type)
    own = tuple(plain(rec.props[k]) for k in own_keys) if own_keys else ()
    return (rec.type, (src.label, src_key_of(src.key)), (dst.label, dst_key_of(dst.key)), own)


def target_keys(idents: Sequence[tuple[Any, ...]]) -> list[Any]:
    """The target node's key of each edge identity."""
    return [ident[2][1] for ident in idents]


def _dedupe(
    records: Sequence[R], ident_of: Callable[[R], tuple[Any, ...]], check: Check,
    rejected: list[Rejection],
) -> dict[tuple[Any, ...], R]:  # fmt: skip
    """Records by identity, later ones merged into earlier ones; a record whose identity
    cannot be made (unknown label, a missing or unhashable key) is refused by `check`."""
    kept: dict[tuple[Any, ...], R] = {}
    keep = kept.setdefault
    for rec in records:
        try:
            ident = ident_of(rec)
            first = keep(ident, rec)
        except (KeyError, TypeError):
            rejected.extend(check(rec) or [Rejection(str(rec), "key", "is invalid")])
            continue
        if first is not rec:
            kept[ident] = _merge(first, rec)
    return kept


@dataclass(frozen=True)
class Merged:
    """A window's records merged by identity, by shape, and every identity it names."""

    shapes: Shapes
    idents: AbstractSet[tuple[Any, ...]]


def node_shapes(records: Sequence[NodeRecord], check: Check, rejected: list[Rejection]) -> Merged:
    """A window's node records merged by identity, by shape."""
    shapes: Shapes = defaultdict(lambda: ([], []))
    kept = _dedupe(records, node_ident, check, rejected)
    for ident, rec in kept.items():
        idents, recs = shapes[(rec.label, tuple(rec.props))]
        idents.append(ident)
        recs.append(rec)
    return Merged(dict(shapes), kept.keys())


def edge_shapes(records: Sequence[EdgeRecord], check: Check, rejected: list[Rejection]) -> Merged:
    """A window's edge records merged by identity, by shape. Identities are made a shape
    at a time; a window where one cannot be made, or where two records name one edge, is
    merged record by record instead (which refuses or merges them, as ever)."""
    fast = _edge_shapes_at_once(records)
    if fast is not None:
        return fast
    shapes: Shapes = defaultdict(lambda: ([], []))
    kept = _dedupe(records, edge_ident, check, rejected)
    for ident, rec in kept.items():
        idents, recs = shapes[(rec.type, rec.src.label, rec.dst.label, tuple(rec.props))]
        idents.append(ident)
        recs.append(rec)
    return Merged(dict(shapes), kept.keys())


_TYPE, _PROPS = attrgetter("type"), attrgetter("props")
_SRC_LABEL, _DST_LABEL = attrgetter("src.label"), attrgetter("dst.label")
_SRC_KEY, _DST_KEY = attrgetter("src.key"), attrgetter("dst.key")


def _edge_buckets(records: Sequence[EdgeRecord]) -> dict[tuple[Any, ...], list[EdgeRecord]]:
    """Records by shape key, in order (column by column: a window is mostly one shape)."""

    def keys() -> Iterator[tuple[Any, ...]]:
        return zip(map(_TYPE, records), map(_SRC_LABEL, records), map(_DST_LABEL, records),
                   map(tuple, map(_PROPS, records)), strict=True)  # fmt: skip

    first = next(keys(), None)
    if first is not None and all(map(first.__eq__, keys())):
        return {first: list(records)}
    buckets: dict[tuple[Any, ...], list[EdgeRecord]] = defaultdict(list)
    for key, rec in zip(keys(), records, strict=True):
        buckets[key].append(rec)
    return buckets


def _edge_shapes_at_once(records: Sequence[EdgeRecord]) -> Merged | None:
    """`edge_shapes` when every identity can be made and none repeats, else None."""
    seen: set[tuple[Any, ...]] = set()
    shapes: Shapes = {}
    for key, recs in _edge_buckets(records).items():
        etype, src_label, dst_label, _ = key
        shape = _edge_shape(etype, src_label, dst_label)
        if shape is None:
            return None
        src_key_of, dst_key_of, own_keys, n_src, n_dst = shape
        srcs, dsts = list(map(_SRC_KEY, recs)), list(map(_DST_KEY, recs))
        if set(map(len, srcs)) != {n_src} or set(map(len, dsts)) != {n_dst}:
            return None
        try:
            src_keys, dst_keys = map(src_key_of, srcs), map(dst_key_of, dsts)
            owns = [tuple(plain(r.props[k]) for k in own_keys) for r in recs] if own_keys else (
                repeat(()))  # fmt: skip
            idents = list(zip(repeat(etype), zip(repeat(src_label), src_keys),
                              zip(repeat(dst_label), dst_keys), owns))  # fmt: skip
            before = len(seen)
            seen.update(idents)
        except (KeyError, TypeError):  # a key missing, or a value that cannot be hashed
            return None
        if len(seen) - before != len(idents):  # two records name one edge: merge them
            return None
        shapes[key] = (idents, recs)
    return Merged(shapes, seen)
