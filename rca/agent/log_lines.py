"""When error-line counts in the alert window point at a service (Loki and pod logs alike)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scipy.stats import binom

from ..scorers.logs import OUT_P, jeffreys_share
from ..windows import ALERT_LEAD_S
from .evidence import Verdict

LINES_MIN = 10
"""Error lines in the alert window below which a log source never supports."""
LINES_RISE = 3.0
"""How many times the baseline's error lines the alert window must hold to support."""


def line_verdict(data: Mapping[str, Any]) -> Verdict:
    """Error-line counts in the window vs the baseline (Loki and pod logs alike).

    Supports: at least LINES_MIN error lines and LINES_RISE times the baseline, unless they
    ended before the alert (`errors_ended`). Refutes: the service logged in the window and
    none of it was an error. Else inconclusive.
    """
    window, baseline, lines = int(data["errors"]), int(data["baseline_errors"]), int(data["lines"])
    if window >= LINES_MIN and window >= LINES_RISE * baseline:
        return Verdict.INCONCLUSIVE if errors_ended(data) else Verdict.SUPPORTS
    if lines > 0 and window == 0:
        return Verdict.REFUTES
    return Verdict.INCONCLUSIVE


def errors_ended(data: Mapping[str, Any]) -> bool:
    """Whether the error lines fell off before the alert: an alert fires while its cause is
    present, so errors of the window that its last minutes (`recent_*`, the short window of
    `rca.windows.ALERT_LEAD_S`) no longer hold are an earlier incident's, as a series that
    stopped is (the metrics check's rule). Judged as the plan's logs scorer judges a
    template that fell silent: the last minutes' error lines against the whole window's
    share (Jeffreys' estimate; a window cut at its first lines is a sample of them too), as
    a binomial lower tail beyond the three-sigma level (`rca.scorers.logs.OUT_P`). Without
    the last minutes' counts, or without a line in them, nothing ended that can be told."""
    if data.get("recent_lines") is None or int(data["recent_lines"]) <= 0:
        return False
    share = jeffreys_share(int(data["errors"]), int(data["lines"]))
    return float(binom.cdf(int(data["recent_errors"]), int(data["recent_lines"]), share)) < OUT_P


def recent_phrase(data: Mapping[str, Any]) -> str:
    """What the last minutes held, as the log checks say it ("" when not counted)."""
    if data.get("recent_lines") is None:
        return ""
    ended = ": its errors ended before the alert" if errors_ended(data) else ""
    return (f"; {data['recent_errors']} of {data['recent_lines']} in the last "
            f"{ALERT_LEAD_S / 60:g} min{ended}")  # fmt: skip
