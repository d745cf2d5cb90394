"""Record validation against the schema, before anything reaches the graph.

Each check returns the reasons a record is refused; an empty list means it may be written.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .model import PROVENANCE_FIELDS, Source, Status
from .records import EdgeRecord, NodeRecord, NodeRef, Rejection
from .vocabulary import EDGES, LABELS

_SOURCES = {s.value for s in Source}
_STATUSES = {s.value for s in Status}


def _check_scalar(value: Any) -> str | None:
    if isinstance(value, bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else "must be a finite number"
    if isinstance(value, str):
        if "\x00" in value:
            return "contains a NUL character, which FalkorDB cannot store"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "is not valid UTF-8 text"
        return None
    return f"has unsupported type {type(value).__name__}"


def check_value(value: Any) -> str | None:
    """A property value must be a scalar or a homogeneous list of scalars."""
    if value is None:
        return "is null (omit the property instead)"
    if isinstance(value, list | tuple):
        kinds = {type(v) for v in value}
        if len(kinds) > 1:
            return "is a list of mixed types"
        for item in value:
            problem = _check_scalar(item)
            if problem:
                return f"has an item that {problem}"
        return None
    return _check_scalar(value)


def _check_props(record: str, origin: str, props: Mapping[str, Any]) -> list[Rejection]:
    out: list[Rejection] = []
    for name, value in props.items():
        if name in PROVENANCE_FIELDS or name == "content_hash":
            out.append(Rejection(record, name, "is owned by the writer", origin))
            continue
        problem = check_value(value)
        if problem:
            out.append(Rejection(record, name, problem, origin))
    return out


def _check_provenance(
    record: str, origin: str, source: str, status: str, confidence: float
) -> list[Rejection]:
    out: list[Rejection] = []
    if str(source) not in _SOURCES:
        out.append(
            Rejection(record, "source", f"{source!r} is not one of {sorted(_SOURCES)}", origin)
        )
    if str(status) not in _STATUSES:
        out.append(
            Rejection(record, "status", f"{status!r} is not one of {sorted(_STATUSES)}", origin)
        )
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not 0.0 <= float(confidence) <= 1.0
    ):
        out.append(Rejection(record, "confidence", f"{confidence!r} is not in [0, 1]", origin))
    return out


def check_ref(ref: NodeRef, record: str, origin: str, field: str) -> list[Rejection]:
    spec = LABELS.get(ref.label)
    if spec is None:
        return [Rejection(record, field, f"unknown label {ref.label!r}", origin)]
    out: list[Rejection] = []
    for key in spec.keys:
        if key not in ref.key:
            out.append(Rejection(record, f"{field}.{key}", "natural key is missing", origin))
            continue
        value = ref.key[key]
        problem = "is empty" if value == "" else _check_scalar(value)
        if value is None:
            problem = "is null"
        if problem:
            out.append(Rejection(record, f"{field}.{key}", problem, origin))
    extra = set(ref.key) - set(spec.keys)
    if extra:
        out.append(
            Rejection(record, field, f"{sorted(extra)} are not part of {ref.label}'s key", origin)
        )
    return out


def validate_node(node: NodeRecord) -> list[Rejection]:
    record, origin = str(node), node.origin
    spec = LABELS.get(node.label)
    if spec is None:
        return [Rejection(record, "label", f"unknown label {node.label!r}", origin)]
    out = check_ref(node.ref, record, origin, "key")
    out += _check_provenance(record, origin, str(node.source), str(node.status), node.confidence)
    out += _check_props(record, origin, node.props)
    overlap = set(node.props) & set(spec.keys)
    out += [Rejection(record, name, "duplicates the natural key", origin) for name in overlap]
    for name in spec.required:
        if name not in node.props:
            out.append(Rejection(record, name, "required property is missing", origin))
    for name, allowed in spec.enums.items():
        if name in node.props and node.props[name] not in allowed:
            msg = f"{node.props[name]!r} is not one of {list(allowed)}"
            out.append(Rejection(record, name, msg, origin))
    return out


def validate_edge(edge: EdgeRecord) -> list[Rejection]:
    record, origin = str(edge), edge.origin
    spec = EDGES.get(edge.type)
    if spec is None:
        return [Rejection(record, "type", f"unknown relationship type {edge.type!r}", origin)]
    out = check_ref(edge.src, record, origin, "src")
    out += check_ref(edge.dst, record, origin, "dst")
    if out:
        return out
    if not spec.allows(edge.src.label, edge.dst.label):
        msg = (
            f"{edge.type} may not go from {edge.src.label} to {edge.dst.label} "
            f"(allowed: {list(spec.sources)} -> {list(spec.targets)})"
        )
        out.append(Rejection(record, "type", msg, origin))
    out += _check_provenance(record, origin, str(edge.source), str(edge.status), edge.confidence)
    out += _check_props(record, origin, edge.props)
    for name in (*spec.required, *spec.keys):
        if name not in edge.props:
            out.append(Rejection(record, name, "required property is missing", origin))
    return out
