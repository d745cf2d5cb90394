"""The rows of one query group (a label, or an edge type between two labels, with one hash
tag): the prepared records and what each row names beside its own fields.

Rows are made on demand, in the form the query at hand needs: `light` rows (no
properties) for touch, pending, reference and, extended, merge and create; `by_source`
rows for the grouped touch of an edge type without a key of its own. A re-ingest whose
grouped touch finds every edge unchanged makes no per-edge row at all.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import TypeVar

from .columns import Prepared

T = TypeVar("T")

__all__ = ["GROUP_MAX", "RowGroup"]

GROUP_MAX = 64
"""Rows of one source node a grouped touch takes at most (see `RowGroup.by_source`)."""


@dataclass
class RowGroup:
    """Rows `at` of one prepared slice, all of one query group, in order. Nodes: rows name
    the natural key (`Prepared.keys`). Edges: `src` and `dst` hold the endpoints' node ids,
    and rows name them (then the edge's own key, if its type has one)."""

    rows: Prepared
    at: Sequence[int]
    """Positions in `rows` (a range when they follow each other)."""
    src: list[int] | None = None
    dst: list[int] | None = None
    grouped: bool = False
    """An edge type without a key of its own (one edge per pair of nodes): the grouped
    touch applies."""

    def __len__(self) -> int:
        return len(self.at)

    def column(self, col: list[T]) -> list[T]:
        """This group's values of one of the slice's columns."""
        at = self.at
        if isinstance(at, range) and at.step == 1:
            return col[at.start : at.stop]
        return [col[i] for i in at]

    def chunks(self, size: int) -> Iterator[RowGroup]:
        for start in range(0, len(self.at), size):
            yield self._pick(slice(start, start + size))

    def take(self, mask: list[bool]) -> RowGroup:
        """The rows whose `mask` entry is true, in order."""
        picked = [j for j, keep in enumerate(mask) if keep]
        src, dst = self.src, self.dst
        return RowGroup(
            self.rows,
            [self.at[j] for j in picked],
            [src[j] for j in picked] if src is not None else None,
            [dst[j] for j in picked] if dst is not None else None,
            self.grouped,
        )

    def identities(self) -> Iterable[Hashable]:
        """What names each row's node or edge within a write: a node's identity; an edge's
        endpoint ids (+ its own key)."""
        if self.src is None or self.dst is None:
            return self.column(self.rows.idents)
        if self.grouped:
            return zip(self.src, self.dst, strict=True)
        own = [ident[3] for ident in self.column(self.rows.idents)]
        return zip(self.src, self.dst, own, strict=True)

    def _pick(self, part: slice) -> RowGroup:
        src, dst = self.src, self.dst
        return RowGroup(
            self.rows,
            self.at[part],
            src[part] if src is not None else None,
            dst[part] if dst is not None else None,
            self.grouped,
        )

    def ends(self) -> list[str]:
        """What each row names: a node's key text; an edge's endpoint ids (+ own key)."""
        if self.src is None or self.dst is None:
            return self.column(self.rows.keys)
        pairs = zip(self.src, self.dst, strict=True)
        if self.grouped:
            return [f"{a},{b}" for a, b in pairs]
        return [f"{a},{b},{k}" if k else f"{a},{b}"
                for k, (a, b) in zip(self.column(self.rows.keys), pairs, strict=True)]  # fmt: skip

    def light(self) -> list[str]:
        """`[i, hash, source, status, confidence, ends...]`: a row without properties."""
        rows = zip(self.column(self.rows.digests), self.column(self.rows.prov), self.ends(),
                   strict=True)  # fmt: skip
        return [f"[{i},{d},{p},{e}]" for i, (d, p, e) in enumerate(rows)]

    def full(self, light: list[str] | None = None, picked: list[int] | None = None) -> list[str]:
        """A light row with the properties map last: what create and merge write; only the
        rows `picked`, when given (`light` when they are made already)."""
        light = light or self.light()
        picked = list(range(len(self.at))) if picked is None else picked
        texts = self.rows.texts.some([self.at[i] for i in picked])
        return [light[i][:-1] + "," + props + "]"
                for i, props in zip(picked, texts, strict=True)]  # fmt: skip

    def warm(self) -> None:
        """Make every row's properties text now (on the preparing thread, not the I/O one)."""
        self.rows.texts.make()

    def by_source(self) -> list[str] | None:
        """The rows of `edge_touch_by_source`: grouped by source node and provenance,
        `[source id, [hash, ...], source, status, confidence]` (an edge's hash names its
        target); or None when the type has a key of its own, or a source has more than
        `GROUP_MAX` rows here (its list is searched once per edge it has, so such a chunk
        is touched row by row)."""
        if not self.grouped or self.src is None or self.dst is None:
            return None
        src = self.src
        hashes = list(map(str, self.column(self.rows.digests)))
        provs = self.column(self.rows.prov)
        if len(set(provs)) > 1:
            return self._by_source_and_provenance(src, hashes, provs)
        prov = provs[0]
        rows = []
        for a, at in groupby(sorted(range(len(src)), key=src.__getitem__), src.__getitem__):
            picked = [hashes[i] for i in at]
            if len(picked) > GROUP_MAX:
                return None
            rows.append(f"[{a},[{','.join(picked)}],{prov}]")
        return rows

    @staticmethod
    def _by_source_and_provenance(
        src: list[int], hashes: list[str], provs: list[str]
    ) -> list[str] | None:
        groups: dict[tuple[int, str], list[str]] = defaultdict(list)
        for a, prov, digest in zip(src, provs, hashes, strict=True):
            groups[(a, prov)].append(digest)
        if max(map(len, groups.values()), default=0) > GROUP_MAX:
            return None
        return [f"[{a},[{','.join(ts)}],{prov}]" for (a, prov), ts in groups.items()]
