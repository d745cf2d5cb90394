"""The two windows every comparison reads: the alert window and the baseline before it.

    baseline[0] ──── baseline ────▶ baseline[1] ≤ alert[0] ──── alert ────▶ alert[1]

A signal points at a suspect only if it is bad *in the alert window* and worse than its
own baseline; a steady bad signal is chronic, not what changed. The read path chooses both
windows from the alert (`windows_for`, the `windows` operator of every program) and the
data (the engine moves an empty baseline back); the agent's tools compare equal spans
ending at the moment they look (`Windows.ending_at`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import Alert

ALERT_SPAN_S = 600.0
"""Alert window when the alert gives no start: the 10 minutes before `at`."""
ALERT_LEAD_S = 300.0
"""How far before the alert fired its window starts: 5 minutes, the customary rate
window of an alerting rule, over which its cause had to move for it to fire."""
BASELINE_SPAN_S = 1200.0
"""Baseline window: the 20 minutes before the alert window."""


@dataclass(frozen=True)
class Windows:
    alert: tuple[float, float]
    baseline: tuple[float, float]

    @classmethod
    def ending_at(cls, at: float, span_s: float) -> Windows:
        """The `span_s` before `at`, against the `span_s` before that."""
        return cls((at - span_s, at), (at - 2 * span_s, at - span_s))

    @property
    def start(self) -> float:
        return self.alert[0]

    @property
    def end(self) -> float:
        return self.alert[1]

    @property
    def span_s(self) -> float:
        return self.alert[1] - self.alert[0]

    def which(self, t: float) -> str | None:
        """'window' for a time in the alert window, 'baseline' in the baseline, else None
        (both half-open at the start: (start, end])."""
        if self.alert[0] < t <= self.alert[1]:
            return "window"
        if self.baseline[0] < t <= self.baseline[1]:
            return "baseline"
        return None

    def describe(self) -> str:
        base = self.baseline[1] - self.baseline[0]
        return f"the {self.span_s / 60:g} min before the alert vs the {base / 60:g} before"


def windows_for(
    alert: Alert,
    at: float | None,
    *,
    lead_s: float = ALERT_LEAD_S,
    span_s: float = ALERT_SPAN_S,
    baseline_s: float = BASELINE_SPAN_S,
    baseline: tuple[float, float] | None = None,
) -> Windows:
    """The alert window ends at `at` (or now). It starts `lead_s` before the alert fired,
    since what caused it moved earlier (a rule rates over minutes, then waits its `for:`);
    without a firing time, `span_s` before the end. A given baseline [b0, b1) with
    b1 < end is kept and the alert window starts no earlier than b1; otherwise the
    baseline is the `baseline_s` before the alert window."""
    end = float(at) if at is not None else time.time()
    fired = alert.starts_at
    start = float(fired) - lead_s if fired is not None and float(fired) <= end else end - span_s
    if baseline is not None and baseline[0] < baseline[1] < end:
        b0, b1 = float(baseline[0]), float(baseline[1])
        return Windows((max(start, b1), end), (b0, b1))
    return Windows((start, end), (start - baseline_s, start))
