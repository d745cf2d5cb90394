"""The two windows every comparison reads: the alert window and the baseline before it.

    baseline[0] ──── baseline ────▶ baseline[1] ≤ alert[0] ──── alert ────▶ alert[1]

A signal points at a suspect only if it is bad *in the alert window* and worse than its
own baseline; a steady bad signal is chronic, not what changed. The read path chooses both
windows from the alert and the data (`rca.investigate.windows_for`); the agent's tools
compare equal spans ending at the moment they look (`Windows.ending_at`).
"""

from __future__ import annotations

from dataclasses import dataclass


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
