"""How sure a figure is: a share's interval, and whether one method beats another on the same
cases.

A dataset here holds 24 to 56 labelled incidents, so one case moves a share by two to four
points, and a target missed or met by a case or two says little. Every share a scorecard
reports gets its Wilson score interval (Wilson 1927: it stays inside [0, 1] and keeps its
coverage for small n and shares near 0 or 1, where the normal approximation does not), and a
comparison of two methods run on the same cases is McNemar's exact test: only the cases
exactly one of them got right tell them apart, and under "no better" each is a fair coin.
"""

from __future__ import annotations

from scipy.stats import binomtest

__all__ = ["LEVEL", "better_p", "wilson"]

LEVEL = 0.95
"""The customary confidence level."""


def wilson(k: int, n: int) -> tuple[float, float] | None:
    """The Wilson score interval of a share of k in n at LEVEL; None without cases."""
    if n <= 0:
        return None
    ci = binomtest(k, n).proportion_ci(confidence_level=LEVEL, method="wilson")
    return round(float(ci.low), 4), round(float(ci.high), 4)


def better_p(wins: int, losses: int) -> float:
    """One-sided p of McNemar's exact test that a method is better than another on the same
    cases: `wins` cases only it got right, `losses` only the other did (1.0 with none)."""
    if wins + losses == 0:
        return 1.0
    return float(binomtest(wins, wins + losses, 0.5, "greater").pvalue)
