"""Read-side views of the whole graph: counts per label/type and a canonical export.

The export is sorted JSONL with the volatile clocks left out, so two ingests of the same
sources produce byte-identical output.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from stackgraph import cypher
from stackgraph.schema import EDGES, INTERNAL_PREFIX, LABELS, VOLATILE_FIELDS

from .store import GraphStore

_PAGE = 10_000
_DROP = set(VOLATILE_FIELDS)


def stats(store: GraphStore) -> dict[str, dict[str, int]]:
    nodes = {r["label"]: int(r["n"]) for r in store.read(cypher.load("stats_nodes"))}
    edges = {r["type"]: int(r["n"]) for r in store.read(cypher.load("stats_edges"))}
    return {"nodes": dict(sorted(nodes.items())), "edges": dict(sorted(edges.items()))}


def _key(label: str, props: dict[str, Any]) -> dict[str, Any]:
    spec = LABELS.get(label)
    keys = spec.keys if spec else tuple(sorted(props))
    return {k: props.get(k) for k in keys}


def _clean(props: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if k not in _DROP and not k.startswith(INTERNAL_PREFIX)}


def export_records(store: GraphStore) -> Iterator[dict[str, Any]]:
    """Every node and edge as a plain dict, volatile fields removed (unsorted)."""
    for label in LABELS:
        after = -1
        while True:
            rows = store.read(
                cypher.render("export_nodes", label=label), {"after": after, "limit": _PAGE}
            )
            for row in rows:
                props = _clean(row["p"])
                yield {"kind": "node", "label": label, "key": _key(label, props), "props": props}
            if len(rows) < _PAGE:
                break
            after = rows[-1]["id"]
    for etype in EDGES:
        after = -1
        while True:
            rows = store.read(
                cypher.render_type("export_edges", etype), {"after": after, "limit": _PAGE}
            )
            for row in rows:
                yield {
                    "kind": "edge",
                    "type": etype,
                    "src": {"label": row["src_label"], **_key(row["src_label"], row["src"])},
                    "dst": {"label": row["dst_label"], **_key(row["dst_label"], row["dst"])},
                    "props": _clean(row["p"]),
                }
            if len(rows) < _PAGE:
                break
            after = rows[-1]["id"]


def export_lines(store: GraphStore) -> list[str]:
    """The canonical export: one JSON object per line, sorted."""
    lines = [
        json.dumps(rec, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        for rec in export_records(store)
    ]
    lines.sort()
    return lines
