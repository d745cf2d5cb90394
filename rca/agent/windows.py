"""The two windows every telemetry check compares: the alert window and the baseline.

    baseline_start ──── baseline ────▶ start ──── alert window ────▶ at (the alert)

A signal supports a suspect only if it is bad *in the alert window* and worse than its
own baseline just before; a steady bad signal is chronic, not what changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .evidence import Verdict

LINES_MIN = 10
"""Error lines in the alert window below which a log source never supports."""
LINES_RISE = 3.0
"""How many times the baseline's error lines the alert window must hold to support."""


@dataclass(frozen=True)
class Windows:
    at: float
    span_s: float

    @property
    def start(self) -> float:
        return self.at - self.span_s

    @property
    def baseline_start(self) -> float:
        return self.at - 2 * self.span_s

    def which(self, t: float) -> str | None:
        """'window' for (start, at], 'baseline' for (baseline_start, start], else None."""
        if self.start < t <= self.at:
            return "window"
        if self.baseline_start < t <= self.start:
            return "baseline"
        return None

    def describe(self) -> str:
        return f"the {self.span_s / 60:g} min before the alert vs the {self.span_s / 60:g} before"


def line_verdict(data: Mapping[str, Any]) -> Verdict:
    """Error-line counts in the window vs the baseline (Loki and pod logs alike).

    Supports: at least LINES_MIN error lines and LINES_RISE times the baseline. Refutes: the
    service logged in the window and none of it was an error. Else inconclusive.
    """
    window, baseline, lines = int(data["errors"]), int(data["baseline_errors"]), int(data["lines"])
    if window >= LINES_MIN and window >= LINES_RISE * baseline:
        return Verdict.SUPPORTS
    if lines > 0 and window == 0:
        return Verdict.REFUTES
    return Verdict.INCONCLUSIVE


def parse_time(value: Any) -> float | None:
    """RFC 3339 (Kubernetes, nanoseconds allowed) → epoch seconds; None if absent/bad."""
    if not value:
        return None
    text = str(value).strip()
    if "." in text:  # Python's parser takes at most 6 fraction digits
        head, _, tail = text.partition(".")
        digits = "".join(c for c in tail if c.isdigit())
        text = f"{head}.{digits[:6]}{tail[len(digits) :]}"
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
