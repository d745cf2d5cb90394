"""The `CYPHER k=v ...` parameter header FalkorDB reads before a query.

The client library builds the same text, but its recursive per-value calls dominated the
batched writer's time (5 of 15 s for 110k records); this is the same escaping rules in a
tighter loop. Strings escape backslash and double quote (FalkorDB's rules); map keys are
backtick-quoted and must not contain a backtick (the schema validates property names).

A string holding a NUL or a lone surrogate is refused (`InputError` naming the parameter),
on reads as on writes: FalkorDB would cut the query at the NUL, and the redis client cannot
encode a surrogate. Boundaries refuse such text before it gets here; this is the last wall.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stackgraph.errors import InputError
from stackgraph.schema import text_problem


class _Unsendable(Exception):
    """A string that may not reach FalkorDB; the header names its parameter."""


class Serialized(str):
    """Parameter text already built by these rules (the writer's rows, built column by
    column from validated values); sent as it is."""


def _value(v: Any) -> str:
    t = type(v)
    if t is Serialized:
        return str.__str__(v)
    if t is str:
        if "\x00" in v or not v.isascii():
            problem = text_problem(v, controls=False)
            if problem:
                raise _Unsendable(problem)
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if t is bool:
        return "true" if v else "false"
    if t is int or t is float:
        return repr(v)
    if v is None:
        return "null"
    if t is dict:
        return "{" + ",".join(f"`{k}`:{_value(x)}" for k, x in v.items()) + "}"
    if t is list or t is tuple:
        return "[" + ",".join([_value(x) for x in v]) + "]"
    if isinstance(v, str):  # e.g. a StrEnum
        return _value(str(v))
    if isinstance(v, bool):
        return _value(bool(v))
    if isinstance(v, int):
        return _value(int(v))
    if isinstance(v, float):
        return _value(float(v))
    if isinstance(v, Mapping):
        return _value(dict(v))
    raise TypeError(f"cannot send a {t.__name__} as a Cypher parameter")


def text(v: Any) -> str:
    """One value as parameter text (what `header` sends for it)."""
    return _value(v)


def header(params: Mapping[str, Any]) -> str:
    """`CYPHER `a`=1 `b`="x" ` for the given parameters (empty string for none)."""
    if not params:
        return ""
    for key in params:
        if not key or "`" in key:
            raise ValueError(f"invalid Cypher parameter name {key!r}")
    parts: list[str] = []
    for key, value in params.items():
        try:
            parts.append(f"`{key}`={_value(value)}")
        except _Unsendable as exc:
            raise InputError(f"query parameter {key!r} {exc}: refused") from None
    return "CYPHER " + " ".join(parts) + " "
