"""Records → rows the writer can send: deduplicated, validated once per column, serialised.

Records naming the same node or edge are merged in order (later properties win). Records
of one label (or edge type and endpoint labels) with one set of property names form a
shape, and each column of a shape (a property, a key part, a provenance field) is checked
by the schema in one pass. A shape where any column fails is checked record by record
(`validate_node` / `validate_edge`), so a refused record is still named with its field
and origin, and the others are still written.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
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

from .rows import column_text, map_texts, row_hash

__all__ = ["Prepared", "prepare_edges", "prepare_nodes"]

R = TypeVar("R", NodeRecord, EdgeRecord)
_PROVENANCE = ("confidence", "source", "status")


@dataclass(slots=True)
class Prepared:
    """One valid, deduplicated record, serialised: what its rows are made of."""

    group: tuple[Any, ...]
    """Rows written by one query: (label, tag, reference) or (type, src, dst, tag, reference)."""
    ident: tuple[Any, ...]
    head: str
    """`"hash","source","status",confidence` as parameter text."""
    digest: str
    """The content hash (hex), the first field of `head`."""
    keys: str
    """Node: the natural key's text; edge: its own key's text (endpoints come later)."""
    props: str
    """The properties map's text (provenance included); hashed into `head`."""
    record: Any


_KEYS: dict[str, Callable[[Any], tuple[Any, ...]]] = {}


def key_of(label: str) -> Callable[[Any], tuple[Any, ...]]:
    """The natural key's values, in the schema's order, from a key mapping (KeyError if
    one is missing): a getter per label, made once."""
    getter = _KEYS.get(label)
    if getter is None:
        keys = LABELS[label].keys
        if len(keys) == 1:
            (only,) = keys
            getter = lambda key: (key[only],)  # noqa: E731
        else:
            getter = itemgetter(*keys)
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


def _serialise(
    records: list[Any], key_columns: list[list[Any]], tag: str | None
) -> list[tuple[str, str, str, str, str]]:
    """(digest, head, keys text, props text, hash tag) of each record of one shape."""
    sources = [str(r.source) for r in records]
    statuses = [str(r.status) for r in records]
    confidences = [float(r.confidence) for r in records]
    names = sorted({*records[0].props, *_PROVENANCE})
    provenance: dict[str, Sequence[Any]] = {
        "source": sources, "status": statuses, "confidence": confidences,
    }  # fmt: skip
    cols: list[Sequence[Any]] = [
        provenance[n] if n in provenance else [r.props[n] for r in records] for n in names
    ]
    props = map_texts(names, cols)
    s_text, st_text, c_text = (column_text(c) for c in (sources, statuses, confidences))
    keys = [",".join(parts) for parts in zip(*map(column_text, key_columns), strict=True)]
    if not key_columns:
        keys = [""] * len(records)
    out = []
    for j, p in enumerate(props):
        digest = row_hash(p)
        head = f'"{digest}",{s_text[j]},{st_text[j]},{c_text[j]}'
        out.append((digest, head, keys[j], p, tag or sources[j]))
    return out


def _is_reference(record: Any) -> bool:
    """A record without properties only asserts that its node or edge exists."""
    return not record.props


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
    src, dst = rec.src, rec.dst
    shape = _edge_shape(rec.type, src.label, dst.label)
    if shape is None:
        raise KeyError(rec.type)
    src_key_of, dst_key_of, own_keys, n_src, n_dst = shape
    if len(src.key) != n_src or len(dst.key) != n_dst:
        raise KeyError(rec.type)
    own = tuple(_plain(rec.props[k]) for k in own_keys) if own_keys else ()
    return (rec.type, src.label, src_key_of(src.key), dst.label, dst_key_of(dst.key), own)


def _dedupe(
    records: Sequence[R], ident_of: Callable[[R], tuple[Any, ...]], check: Check,
    rejected: list[Rejection],
) -> tuple[dict[tuple[Any, ...], R], int]:  # fmt: skip
    """Records by identity, later ones merged into earlier ones; a record whose identity
    cannot be made (unknown label, a missing or unhashable key) is refused by `check`."""
    kept: dict[tuple[Any, ...], R] = {}
    merged = 0
    for rec in records:
        try:
            ident = ident_of(rec)
            hash(ident)
        except (KeyError, TypeError):
            rejected.extend(check(rec) or [Rejection(str(rec), "key", "is invalid")])
            continue
        if ident in kept:
            kept[ident] = _merge(kept[ident], rec)
            merged += 1
        else:
            kept[ident] = rec
    return kept, merged


def prepare_nodes(
    records: Sequence[NodeRecord], tag: str | None, rejected: list[Rejection]
) -> tuple[list[Prepared], int]:
    """Valid node records of a window, merged and serialised; and how many were merged."""
    kept, merged = _dedupe(records, _node_ident, validate_node, rejected)
    shapes: dict[tuple[Any, ...], list[NodeRecord]] = defaultdict(list)
    for rec in kept.values():
        shapes[(rec.label, tuple(rec.props))].append(rec)
    order = {ident: n for n, ident in enumerate(kept)}
    out: list[Prepared] = []
    for (label, names), shape in shapes.items():
        spec = LABELS[label]
        fast = _nodes_ok(spec, names, shape)
        good = _validated(shape, fast, validate_node, rejected)
        if not good:
            continue
        key_cols = [[r.key[k] for r in good] for k in spec.keys]
        get = key_of(label)
        for rec, (digest, head, keys, props, hash_tag) in zip(
            good, _serialise(good, key_cols, tag), strict=True
        ):
            ident = (label, get(rec.key))
            group = (label, hash_tag, _is_reference(rec))
            out.append(Prepared(group, ident, head, digest, keys, props, rec))
    out.sort(key=lambda p: order[p.ident])
    return out, merged


def _nodes_ok(spec: Any, names: tuple[str, ...], shape: list[NodeRecord]) -> bool:
    if not names_ok(names, spec.keys) or not set(spec.required) <= set(names):
        return False
    for name in names:
        col = [r.props[name] for r in shape]
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
        {str(r.source) for r in shape},
        {str(r.status) for r in shape},
        [r.confidence for r in shape],
    )


def prepare_edges(
    records: Sequence[EdgeRecord], tag: str | None, rejected: list[Rejection]
) -> tuple[list[Prepared], int]:
    """Valid edge records of a window, merged and serialised; and how many were merged.
    `ident` is (type, src label, src key, dst label, dst key, own key) for the endpoints."""
    kept, merged = _dedupe(records, _edge_ident, validate_edge, rejected)
    shapes: dict[tuple[Any, ...], list[tuple[tuple[Any, ...], EdgeRecord]]] = defaultdict(list)
    for ident, rec in kept.items():
        shapes[(rec.type, rec.src.label, rec.dst.label, tuple(rec.props))].append((ident, rec))
    order = {ident: n for n, ident in enumerate(kept)}
    out: list[Prepared] = []
    for (etype, src_label, dst_label, names), entries in shapes.items():
        spec = EDGES[etype]
        shape = [rec for _, rec in entries]
        fast = _edges_ok(spec, names, shape)
        good = _validated(shape, fast, validate_edge, rejected)
        if not good:
            continue
        own_cols = [[_plain(r.props[k]) for r in good] for k in spec.keys]
        by_rec = {id(rec): ident for ident, rec in entries}
        for rec, (digest, head, keys, props, hash_tag) in zip(
            good, _serialise(good, own_cols, tag), strict=True
        ):
            group = (etype, src_label, dst_label, hash_tag, _is_reference(rec))
            out.append(Prepared(group, by_rec[id(rec)], head, digest, keys, props, rec))
    out.sort(key=lambda p: order[p.ident])
    return out, merged


def _edges_ok(spec: Any, names: tuple[str, ...], shape: list[EdgeRecord]) -> bool:
    first = shape[0]
    if not spec.allows(first.src.label, first.dst.label) or not names_ok(names):
        return False
    if not {*spec.required, *spec.keys} <= set(names):
        return False
    if not all(column_ok([r.props[n] for r in shape]) for n in names):
        return False
    for end in ("src", "dst"):
        refs = [getattr(r, end) for r in shape]
        if not all(key_column_ok([ref.key[k] for ref in refs]) for k in LABELS[refs[0].label].keys):
            return False
    return _provenance_ok(shape)
