"""Parameter text of the writer's rows, built column by column, and their content hashes.

Building a dict per record and serialising it value by value was most of the writer's
Python time. Here a column (one property across the records of one shape) is turned into
parameter text in one pass per type, rows are joined from the columns, and each row's
content hash is taken over the values themselves, not over that text: a re-ingest of
unchanged rows compares hashes and makes no properties text at all (`PropsTexts` makes it
only for rows that are written).

Row layout, positional (`cypher.render` fills key slots from the schema; `ROW_FIXED`
fields come first):

    [i, hash, source, status, confidence, key/endpoint values..., {properties}]

`i` is the row's place in its chunk (phase 1 reports unchanged rows by it); the light row
of phase 1 leaves the properties out.
"""

from __future__ import annotations

import marshal
from collections.abc import Mapping, Sequence
from typing import Any

import xxhash

from stackgraph.params import text

__all__ = ["PropsTexts", "column_text", "content_hash", "list_texts", "map_texts", "row_hashes"]


def _quote(col: Sequence[str]) -> list[str]:
    joined = "".join(col)
    if "\\" not in joined and '"' not in joined:
        return [f'"{v}"' for v in col]
    return ['"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in col]


def column_text(col: Sequence[Any]) -> list[str]:
    """Parameter text of each value of a column (the same text `params.header` makes)."""
    kinds = set(map(type, col))
    if kinds == {str}:
        return _quote(col)
    if kinds == {float}:
        return _floats(col)
    if kinds <= {int, float}:
        return list(map(repr, col))
    if kinds == {bool}:
        return ["true" if v else "false" for v in col]
    return [text(v) for v in col]


def _floats(col: Sequence[float]) -> list[str]:
    """`repr` of each float (the shortest text that reads back the same), made once per
    distinct value when values repeat (rounded statistics): `repr` costs ~10x a lookup.
    Zeros are not shared (0.0 == -0.0, but their texts differ)."""
    if len(set(col[:64])) == min(len(col), 64):  # no repeat among the first: likely none
        return list(map(repr, col))
    distinct = set(col)
    if 0.0 in distinct or len(distinct) * 4 > len(col) * 3:
        return list(map(repr, col))
    text = {v: repr(v) for v in distinct}
    return [text[v] for v in col]


def map_texts(names: Sequence[str], columns: Sequence[Sequence[Any]]) -> list[str]:
    """`{`a`:1,`b`:"x"}` per row, properties in the given (sorted) order: one format
    string per shape makes each row in a single step."""
    if not names:
        return ["{}"] * (len(columns[0]) if columns else 0)
    fmt = "{" + ",".join(f"`{name.replace('%', '%%')}`:%s" for name in names) + "}"
    texts = [_constant_or_text(col) for col in columns]
    if len(texts) == 1:
        return [fmt % (v,) for v in texts[0]]
    return [fmt % row for row in zip(*texts, strict=True)]


def list_texts(columns: Sequence[Sequence[Any]]) -> list[str]:
    """`1,"x",true` per row: the columns' values, comma-separated, without brackets."""
    fmt = ",".join("%s" for _ in columns)
    texts = [_constant_or_text(col) for col in columns]
    if texts and texts[0] and all(len(set(t)) == 1 for t in texts):  # provenance, mostly
        return [fmt % tuple(t[0] for t in texts)] * len(texts[0])
    return [fmt % row for row in zip(*texts, strict=True)]


_REPEATABLE = (str, int, float)


def _constant_or_text(col: Sequence[Any]) -> Sequence[str]:
    """A column's text; a column of one repeated value (provenance, mostly) is made once.
    (Falsy values are not taken as repeats: 0.0 == -0.0, but their texts differ.)"""
    first = col[0] if col else None
    kind = type(first)
    repeated = kind in _REPEATABLE and first and col.count(first) == len(col)
    if repeated and (kind is str or set(map(type, col)) == {kind}):  # 1 == 1.0 == True
        return [column_text([first])[0]] * len(col)
    return column_text(col)


class PropsTexts:
    """The properties texts of one slice's rows, made when rows are written (a re-ingest of
    unchanged rows needs none): all at once and kept, or only the few rows that changed."""

    __slots__ = ("_columns", "_names", "_texts")

    def __init__(self, names: Sequence[str], columns: Sequence[Sequence[Any]]) -> None:
        self._names, self._columns = names, columns
        self._texts: list[str] | None = None

    def make(self) -> list[str]:
        if self._texts is None:
            self._texts = map_texts(self._names, self._columns)
        return self._texts

    def some(self, ats: Sequence[int]) -> list[str]:
        """The texts of rows `ats`; fewer than half of the rows are made alone."""
        if self._texts is None and 2 * len(ats) < len(self._columns[0] if self._columns else ()):
            return map_texts(self._names, [[col[a] for a in ats] for col in self._columns])
        texts = self.make()
        return [texts[a] for a in ats]


_MARSHAL_VERSION = 2
"""Version 2 has no back-references (3 and later mark objects that are shared, which depends
on reference counts): equal values give equal bytes, whatever else holds them."""


def row_hashes(
    names: Sequence[str], columns: Sequence[Sequence[Any]], targets: Sequence[Any] | None = None,
) -> list[int]:  # fmt: skip
    """The content hash of each row (one value from each column; `names` in order): xxh3 of
    the row's values as marshal bytes, seeded by the names, to 63 bits (a graph integer:
    parsed, stored and compared for less than a text). No text is made, floats are not
    formatted: this is most of what a re-ingest of unchanged rows costs. With `targets` (of
    edges: each one's target node key) an edge's hash names its target, so the grouped
    touch finds an unchanged edge among its source's by its hash alone
    (`edge_touch_by_source`)."""
    seed = xxhash.xxh3_64_intdigest("\x00".join(names).encode("utf-8"))
    digest, dump, version = xxhash.xxh3_64_intdigest, marshal.dumps, _MARSHAL_VERSION
    cols = [*columns, targets] if targets is not None else columns
    try:
        return [digest(dump(row, version), seed) >> 1 for row in zip(*cols, strict=True)]
    except ValueError:  # a value of a type marshal refuses (a subclass): that row as text
        pass
    out = []
    for row in zip(*cols, strict=True):
        try:
            out.append(digest(dump(row, version), seed) >> 1)
        except ValueError:
            out.append(digest(dump(tuple(map(text, row)), version), seed ^ 1) >> 1)
    return out


def content_hash(props: Mapping[str, Any], target: Any = None) -> int:
    """Digest of what a record sets (properties and provenance); equal hashes mean the SET
    would change nothing. Names sorted: exactly what the batched writer stores for the
    same record (an edge's with its target's key, `identity.target_keys`)."""
    names = sorted(props)
    return row_hashes(names, [[props[n]] for n in names], None if target is None else [target])[0]
