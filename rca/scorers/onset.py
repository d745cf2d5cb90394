"""Onset ordering: a root cause's signals usually leave their band before its victims'.
Among the candidates with a series out of band, the earliest first crossing ranks first.
Abstains when no series has a time at which it left its band."""

from __future__ import annotations

from collections.abc import Mapping

from ..clock import iso
from ..facts import Facts
from ..model import Evidence
from .anomaly import judged
from .signal import Signal, votes


def onset(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    first: dict[str, tuple[float, str]] = {}
    for name, tests in judged(facts).items():
        for t, ref in tests:
            if t.out and t.onset is not None and (name not in first or t.onset < first[name][0]):
                first[name] = (t.onset, ref)
    if not first:
        return votes("onset", {}, abstained="no series left its band at a known time")
    latest = max(t for t, _ in first.values())
    earliest = min(t for t, _ in first.values())
    span = max(latest - earliest, 1.0)
    scores = {n: 1.0 + (latest - t) / span for n, (t, _) in first.items()}
    evidence = {
        n: (Evidence("onset", f"{ref} left its band at {iso(t)}, "
                     f"{t - earliest:.0f} s after the first candidate's", "metrics",
                     round(scores[n], 4), f"{n}/{ref}"),)
        for n, (t, ref) in first.items()
    }  # fmt: skip
    return votes("onset", scores, evidence)
