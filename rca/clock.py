"""Times as epoch seconds: the one reader of times from users, alerts, Kubernetes and
stored facts."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from stackgraph.errors import InputError


def parse_time(value: Any) -> float | None:
    """Epoch seconds from a number, a numeric string or ISO 8601 / RFC 3339 text; None if
    unreadable.

    Naive ISO times are read as UTC. Millisecond epochs (> 1e11) are scaled down. Fractions
    past microseconds (Kubernetes writes nanoseconds) are cut, as Python reads at most six.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        t = float(value)
    else:
        text = str(value).strip()
        if not text:
            return None
        try:
            t = float(text)
        except ValueError:
            try:
                dt = datetime.fromisoformat(_microseconds(text).replace("Z", "+00:00"))
            except ValueError:
                return None
            if dt.tzinfo is None:
                dt = dt.replace(tzinfo=UTC)
            t = dt.timestamp()
    if not math.isfinite(t):
        return None
    return t / 1000.0 if t > 1e11 else t


def require_time(text: str, what: str = "time") -> float:
    """`parse_time` for what a person typed: unreadable text is an InputError naming `what`."""
    t = parse_time(text)
    if t is None:
        raise InputError(
            f"{what}: {text!r} is neither epoch seconds nor ISO-8601 (2026-01-31T12:00:00Z)"
        )
    return t


def _microseconds(text: str) -> str:
    head, dot, tail = text.partition(".")
    if not dot:
        return text
    digits = len(tail) - len(tail.lstrip("0123456789"))
    return f"{head}.{tail[: min(digits, 6)]}{tail[digits:]}"


def iso(t: float | None) -> str:
    """An epoch time as compact ISO 8601 UTC, for people."""
    if t is None:
        return "-"
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
