"""Parameter text of the writer's rows, built column by column, and their content hashes.

Building a dict per record and serialising it value by value was most of the writer's
Python time. Here a column (one property across the records of one shape) is turned into
parameter text in one pass per type, rows are joined from the columns, and each row's
properties map is hashed as the very text that is sent (xxh3: a tenth of blake2b's cost).

Row layout, positional (`cypher.render` fills key slots from the schema; `ROW_FIXED`
fields come first):

    [i, hash, source, status, confidence, key/endpoint values..., {properties}]

`i` is the row's place in its chunk (phase 1 reports unchanged rows by it); the light row
of phase 1 leaves the properties out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import xxhash

from stackgraph.params import text

__all__ = ["column_text", "content_hash", "list_texts", "map_texts", "row_hash", "row_hashes"]


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
    return [fmt % row for row in zip(*map(_constant_or_text, columns), strict=True)]


def _constant_or_text(col: Sequence[Any]) -> Sequence[str]:
    """A column's text; a column of one repeated value (provenance, mostly) is made once."""
    first = col[0] if col else None
    if type(first) is str and col.count(first) == len(col):
        return [column_text([first])[0]] * len(col)
    return column_text(col)


def row_hash(props_text: str) -> str:
    return xxhash.xxh3_64_hexdigest(props_text.encode("utf-8"))


def row_hashes(props_texts: Sequence[str]) -> list[str]:
    """`row_hash` of each (one loop, no call per row)."""
    digest = xxhash.xxh3_64_hexdigest
    return [digest(text.encode("utf-8")) for text in props_texts]


def content_hash(props: Mapping[str, Any]) -> str:
    """Digest of what a record sets (properties and provenance); equal hashes mean the SET
    would change nothing. The hash of the properties map's parameter text, names sorted:
    exactly what the batched writer stores for the same record."""
    names = sorted(props)
    return row_hash(map_texts(names, [[props[n]] for n in names])[0])
