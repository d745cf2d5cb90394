"""Records → rows the writer can send: deduplicated, validated once per column, serialised.

A window's records are merged by the node or edge they name and grouped into shapes
(`identity`); each shape is taken in slices of the writer's batch size, and each column
of a slice (a property, a key part, a provenance field) is checked by the schema in one
pass. A slice where any column fails is checked record by record (`validate_node` /
`validate_edge`), so a refused record is still named with its field and origin, and the
others are still written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from operator import attrgetter, itemgetter
from typing import Any

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

from .identity import (
    Shapes,
    edge_ident,
    edge_shapes,
    node_ident,
    node_shapes,
    plain,
    target_keys,
)
from .rows import PropsTexts, column_text, list_texts, row_hashes

__all__ = ["Prepared", "PreparedWindow", "prepare_edges", "prepare_nodes"]

_PROVENANCE = ("confidence", "source", "status")


@dataclass(slots=True)
class Prepared:
    """One slice of valid, deduplicated records of one shape, serialised column by column
    (a row is a position in every column): no object per record."""

    parts: dict[tuple[Any, ...], Sequence[int]]
    """Rows written by one query, by their group: (label, tag, reference) or (type, src,
    dst, tag, reference); mostly one group with every row."""
    idents: list[tuple[Any, ...]]
    digests: list[int]
    """The content hash of each row's properties (provenance included)."""
    prov: list[str]
    """`"source","status",confidence` as parameter text."""
    keys: list[str]
    """Node: the natural key's text; edge: its own key's text (endpoints come later)."""
    texts: PropsTexts
    """The properties texts (made when a row needs one)."""
    records: list[Any]

    def __len__(self) -> int:
        return len(self.records)


Check = Callable[[Any], list[Rejection]]
_PROPS = attrgetter("props")


def _columns(shape: list[Any], names: tuple[str, ...]) -> dict[str, list[Any]]:
    """The property columns of one shape's records (each record has every name)."""
    props = list(map(_PROPS, shape))
    return {n: list(map(itemgetter(n), props)) for n in names}


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


Serialised = tuple[list[int], list[str], list[str], PropsTexts, list[str]]
"""Columns of a shape's rows: digests, provenance texts, keys texts, props texts, hash tags."""


def _serialise(
    records: list[Any], key_columns: list[list[Any]], tag: str | None,
    cols: dict[str, list[Any]], targets: list[Any] | None,
) -> Serialised:  # fmt: skip
    """The columns (`Serialised`) of one shape's records; `cols` has the property columns
    already taken out (validation did), or not all of them. `targets`: hashed with the
    values (edges, `rows.row_hashes`)."""
    sources = _strings([r.source for r in records])
    statuses = _strings([r.status for r in records])
    confidences = [r.confidence for r in records]
    if set(map(type, confidences)) != {float}:
        confidences = [float(c) for c in confidences]
    names = sorted({*records[0].props, *_PROVENANCE})
    columns: dict[str, Sequence[Any]] = {
        **cols, "source": sources, "status": statuses, "confidence": confidences,
    }  # fmt: skip
    values = [columns[n] if n in columns else [r.props[n] for r in records] for n in names]
    digests = row_hashes(names, values, targets)
    props = PropsTexts(names, values)
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


@dataclass(frozen=True)
class PreparedWindow:
    """A window merged: the nodes or edges it names, and its slices, prepared when taken."""

    idents: AbstractSet[tuple[Any, ...]]
    slices: Iterator[Prepared]


def prepare_nodes(
    records: Sequence[NodeRecord], tag: str | None, rejected: list[Rejection], size: int
) -> PreparedWindow:
    """Valid node records of a window, merged (`identity`); then, as the slices are taken,
    validated and serialised in slices of at most `size` records of one shape each (the
    writer sends a slice while it prepares the next)."""
    merged = node_shapes(records, validate_node, rejected)
    return PreparedWindow(merged.idents, _slices(_NODES, merged.shapes, tag, rejected, size))


def _prepared(
    good: list[Any], idents: list[tuple[Any, ...]], rows: Serialised,
    group: tuple[Any, ...], reference: bool,
) -> Prepared:  # fmt: skip
    """One shape's slice as `Prepared`, each row in its query group: `group` + (hash tag,
    reference). A reference (a shape without properties) only asserts that its node or
    edge exists."""
    digests, prov, keys, props, tags = rows
    distinct = set(tags)
    if len(distinct) == 1:  # one hash tag (the writer's, or one source): one query group
        parts: dict[tuple[Any, ...], Sequence[int]] = {
            (*group, tags[0], reference): range(len(good))
        }
    else:
        at: dict[str, list[int]] = {t: [] for t in distinct}
        for i, t in enumerate(tags):
            at[t].append(i)
        parts = {(*group, t, reference): rows_ for t, rows_ in at.items()}
    return Prepared(parts, idents, digests, prov, keys, props, good)


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
) -> PreparedWindow:
    """`prepare_nodes` for edge records (`identity.edge_ident` names them)."""
    merged = edge_shapes(records, validate_edge, rejected)
    return PreparedWindow(merged.idents, _slices(_EDGES, merged.shapes, tag, rejected, size))


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


@dataclass(frozen=True)
class _Kind:
    """What differs between node and edge records on their way to rows."""

    spec: Callable[[str], Any]
    """The schema of a label or edge type."""
    ok: Callable[[Any, tuple[str, ...], list[Any], dict[str, list[Any]]], bool]
    """The column checks of one slice."""
    check: Check
    """Record by record, naming what is wrong."""
    ident: Callable[[Any], tuple[Any, ...]]
    key: Callable[[Any, str], Any]
    """A key part written in the row: a node's natural key, an edge's own key."""
    hashed: Callable[[list[tuple[Any, ...]]], list[Any]] | None
    """What of the identities the content hash covers (edges: see `rows.row_hashes`)."""


_NODES = _Kind(LABELS.__getitem__, _nodes_ok, validate_node, node_ident,
               lambda r, k: r.key[k], hashed=None)  # fmt: skip
_EDGES = _Kind(EDGES.__getitem__, _edges_ok, validate_edge, edge_ident,
               lambda r, k: plain(r.props[k]), hashed=target_keys)  # fmt: skip


def _slices(
    kind: _Kind, shapes: Shapes, tag: str | None, rejected: list[Rejection], size: int
) -> Iterator[Prepared]:
    """Each shape (a shape key: the group, then the property names) in slices of `size`."""
    for shape_key, (all_idents, records_) in shapes.items():
        group, names = shape_key[:-1], shape_key[-1]
        spec = kind.spec(group[0])
        for start in range(0, len(records_), max(size, 1)):
            shape = records_[start : start + size]
            cols = _columns(shape, names)
            good = _validated(shape, kind.ok(spec, names, shape, cols), kind.check, rejected)
            if not good:
                continue
            if good is shape:
                idents = all_idents[start : start + size]
            else:
                idents, cols = [kind.ident(r) for r in good], {}
            key_cols = [[kind.key(r, k) for r in good] for k in spec.keys]
            hashed = kind.hashed(idents) if kind.hashed else None
            rows = _serialise(good, key_cols, tag, cols, hashed)
            yield _prepared(good, idents, rows, group, not names)
