"""Record validation against the schema, before anything reaches the graph.

Each check returns the reasons a record is refused; an empty list means it may be written.
Checks collect (field, message) pairs and name the record only when something is wrong,
since naming every record would cost more than checking it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from .model import INTERNAL_PREFIX, PROVENANCE_FIELDS, Source, Status
from .records import EdgeRecord, NodeRecord, NodeRef, Rejection
from .text import MAX_KEY_CHARS, MAX_PROPERTY_CHARS, text_problem
from .vocabulary import EDGES, LABELS

_PROP_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_SOURCES = {s.value for s in Source}
_STATUSES = {s.value for s in Status}
_OWNED = {*PROVENANCE_FIELDS, "sources"}

Problem = tuple[str, str]


def _check_scalar(value: Any, max_chars: int = MAX_PROPERTY_CHARS) -> str | None:
    if isinstance(value, bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else "must be a finite number"
    if isinstance(value, str):
        return text_problem(value, max_chars, controls=False)
    return f"has unsupported type {type(value).__name__}"


def check_value(value: Any) -> str | None:
    """A property value must be a scalar or a homogeneous list of scalars."""
    if value is None:
        return "is null (omit the property instead)"
    if isinstance(value, list | tuple):
        if len({type(v) for v in value}) > 1:
            return "is a list of mixed types"
        for item in value:
            problem = _check_scalar(item)
            if problem:
                return f"has an item that {problem}"
        return None
    return _check_scalar(value)


_GOOD_NAMES: set[str] = set()


def _props(props: Mapping[str, Any]) -> list[Problem]:
    out: list[Problem] = []
    for name, value in props.items():
        # fast path: a known-good name and a plain scalar (the 99% case of a big ingest)
        if name in _GOOD_NAMES:
            t = type(value)
            if t is int or t is bool:
                continue
            if t is str and value.isascii() and "\x00" not in value and len(value) < 65536:
                continue
            if t is float and math.isfinite(value):
                continue
        if not isinstance(name, str) or not _PROP_NAME.match(name):
            out.append((str(name), "is not a valid property name"))
        elif name in _OWNED or name.startswith(INTERNAL_PREFIX):
            out.append((name, "is owned by the writer"))
        else:
            if len(_GOOD_NAMES) < 10_000:
                _GOOD_NAMES.add(name)
            problem = check_value(value)
            if problem:
                out.append((name, problem))
    return out


def _provenance(source: str, status: str, confidence: float) -> list[Problem]:
    out: list[Problem] = []
    if source not in _SOURCES:
        out.append(("source", f"{source!r} is not one of {sorted(_SOURCES)}"))
    if status not in _STATUSES:
        out.append(("status", f"{status!r} is not one of {sorted(_STATUSES)}"))
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not 0.0 <= float(confidence) <= 1.0
    ):
        out.append(("confidence", f"{confidence!r} is not in [0, 1]"))
    return out


_GOOD_REFS: set[tuple[str, tuple[tuple[str, Any], ...]]] = set()


def _ref(ref: NodeRef, field: str) -> list[Problem]:
    """Edges name the same endpoints many times over: remember the valid ones."""
    try:
        ident = (ref.label, tuple(ref.key.items()))
        if ident in _GOOD_REFS:
            return []
    except TypeError:  # an unhashable key value: the slow path reports it
        ident = None
    out = _check_ref(ref, field)
    if not out and ident is not None and len(_GOOD_REFS) < 200_000:
        _GOOD_REFS.add(ident)
    return out


def _check_ref(ref: NodeRef, field: str) -> list[Problem]:
    spec = LABELS.get(ref.label)
    if spec is None:
        return [(field, f"unknown label {ref.label!r}")]
    out: list[Problem] = []
    for key in spec.keys:
        if key not in ref.key:
            out.append((f"{field}.{key}", "natural key is missing"))
            continue
        value = ref.key[key]
        problem = "is null" if value is None else "is empty" if value == "" else None
        problem = problem or _check_scalar(value, MAX_KEY_CHARS)
        if problem:
            out.append((f"{field}.{key}", problem))
    if len(ref.key) != len(spec.keys):
        extra = sorted(set(ref.key) - set(spec.keys))
        if extra:
            out.append((field, f"{extra} are not part of {ref.label}'s key"))
    return out


def _name(problems: list[Problem], record: object, origin: str) -> list[Rejection]:
    if not problems:
        return []
    name = str(record)
    return [Rejection(name, field, message, origin) for field, message in problems]


def validate_node(node: NodeRecord) -> list[Rejection]:
    spec = LABELS.get(node.label)
    if spec is None:
        return _name([("label", f"unknown label {node.label!r}")], node, node.origin)
    out = _ref(node.ref, "key")
    out += _provenance(str(node.source), str(node.status), node.confidence)
    out += _props(node.props)
    out += [(name, "duplicates the natural key") for name in set(node.props) & set(spec.keys)]
    out += [
        (name, "required property is missing") for name in spec.required if name not in node.props
    ]
    for name, allowed in spec.enums.items():
        if name in node.props and node.props[name] not in allowed:
            out.append((name, f"{node.props[name]!r} is not one of {list(allowed)}"))
    return _name(out, node, node.origin)


def validate_edge(edge: EdgeRecord) -> list[Rejection]:
    spec = EDGES.get(edge.type)
    if spec is None:
        return _name([("type", f"unknown relationship type {edge.type!r}")], edge, edge.origin)
    out = _ref(edge.src, "src") + _ref(edge.dst, "dst")
    if out:
        return _name(out, edge, edge.origin)
    if not spec.allows(edge.src.label, edge.dst.label):
        out.append((
            "type",
            f"{edge.type} may not go from {edge.src.label} to {edge.dst.label} "
            f"(allowed: {list(spec.sources)} -> {list(spec.targets)})",
        ))  # fmt: skip
    out += _provenance(str(edge.source), str(edge.status), edge.confidence)
    out += _props(edge.props)
    out += [
        (name, "required property is missing")
        for name in (*spec.required, *spec.keys)
        if name not in edge.props
    ]
    return _name(out, edge, edge.origin)


def check_ref(ref: NodeRef, record: str, origin: str, field: str) -> list[Rejection]:
    """Validate a node reference on its own (for callers building edges by hand)."""
    return [Rejection(record, f, m, origin) for f, m in _ref(ref, field)]


# -- column checks: the same rules, once per column of a batch -------------------------------
# Each says only "all valid"; a column that fails sends its records through `validate_node`
# / `validate_edge`, which name the field and the record.


def _utf8(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def column_ok(values: Sequence[Any], max_chars: int = MAX_PROPERTY_CHARS) -> bool:
    """Every value is one `check_value` accepts."""
    kinds = set(map(type, values))
    if kinds <= {int, bool}:
        return True
    if kinds <= {int, bool, float}:
        try:  # a NaN or an infinity makes the sum one (so does an overflow: a false alarm,
            return math.isfinite(sum(values))  # and then each record is checked alone)
        except OverflowError:  # an int too large for a float
            return all(math.isfinite(v) for v in values if type(v) is float)
    if kinds == {str}:
        if max(map(len, values), default=0) > max_chars:
            return False
        joined = "".join(values)
        return "\x00" not in joined and _utf8(joined)
    if kinds <= {list, tuple}:
        return all(check_value(v) is None for v in values)
    return False


def key_column_ok(values: Sequence[Any]) -> bool:
    """Every value is a usable natural-key value: a scalar, not null, not empty."""
    kinds = set(map(type, values))
    if not kinds <= {str, int, bool, float}:
        return False
    if str in kinds and "" in values:
        return False
    return column_ok(values, MAX_KEY_CHARS)


def names_ok(names: Iterable[str], keys: Collection[str] = ()) -> bool:
    """Property names a lane may set: well-formed, not the writer's, not a natural key."""
    for name in names:
        if name not in _GOOD_NAMES:
            if not isinstance(name, str) or not _PROP_NAME.match(name):
                return False
            if name in _OWNED or name.startswith(INTERNAL_PREFIX):
                return False
            if len(_GOOD_NAMES) < 10_000:
                _GOOD_NAMES.add(name)
        if name in keys:
            return False
    return True


def provenance_ok(sources: Iterable[str], statuses: Iterable[str], confidences: Any) -> bool:
    if not set(sources) <= _SOURCES or not set(statuses) <= _STATUSES:
        return False
    if not set(map(type, confidences)) <= {int, float}:
        return False
    return (
        bool(confidences)
        and min(confidences) >= 0.0
        and max(confidences) <= 1.0
        and (
            all(c == c for c in confidences)  # no NaN (min/max would pass it)
        )
    )
