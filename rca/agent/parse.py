"""Tool calls out of whatever a model sent: structured `tool_calls`, or raw JSON in the
text (fenced or bare), which local models often emit instead."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: Any
    """Whatever the model gave; validated later against the tool's schema."""


def _objects(text: str) -> list[Any]:
    """JSON values found in text: fenced blocks first, then balanced {...} spans."""
    found: list[Any] = []
    for block in _FENCE.findall(text):
        try:
            found.append(json.loads(block))
        except ValueError:
            continue
    if found:
        return found
    decoder = json.JSONDecoder()
    i = 0
    while (start := text.find("{", i)) != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            i = start + 1
            continue
        found.append(value)
        i = end
    return found


def _from_value(value: Any) -> list[ToolCall]:
    if isinstance(value, list):
        return [c for v in value for c in _from_value(v)]
    if not isinstance(value, Mapping):
        return []
    if "tool_calls" in value:
        return _from_value(value["tool_calls"])
    if isinstance(value.get("function"), Mapping):
        return _from_value(value["function"])
    name = value.get("name") or value.get("tool") or value.get("tool_name")
    if not isinstance(name, str):
        return []
    args: Any = next(
        (value[k] for k in ("arguments", "parameters", "args", "input") if k in value), {}
    )
    if isinstance(args, str):
        with contextlib.suppress(ValueError):
            args = json.loads(args)
    return [ToolCall(name, args)]


def calls_in_text(text: str) -> list[ToolCall]:
    return [c for value in _objects(text or "") for c in _from_value(value)]


def structured_calls(tool_calls: Sequence[Any] | None) -> list[ToolCall]:
    out: list[ToolCall] = []
    for tc in tool_calls or ():
        fn = getattr(tc, "function", None)
        if fn is None:
            continue
        out.append(ToolCall(str(fn.name), fn.arguments))
    return out
