"""When error-line counts in the alert window point at a service (Loki and pod logs alike)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .evidence import Verdict

LINES_MIN = 10
"""Error lines in the alert window below which a log source never supports."""
LINES_RISE = 3.0
"""How many times the baseline's error lines the alert window must hold to support."""


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
