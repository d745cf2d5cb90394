"""Times as epoch seconds: what the read path accepts from users and from stored facts."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any


def parse_time(value: Any) -> float | None:
    """Epoch seconds from a number, a numeric string or ISO 8601 text; None if unreadable.

    Naive ISO times are read as UTC. Millisecond epochs (> 1e11) are scaled down.
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
                dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                return None
            if dt.tzinfo is None:
                dt = dt.replace(tzinfo=UTC)
            t = dt.timestamp()
    if not math.isfinite(t):
        return None
    return t / 1000.0 if t > 1e11 else t


def iso(t: float | None) -> str:
    """An epoch time as compact ISO 8601 UTC, for people."""
    if t is None:
        return "-"
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
