"""Onset ordering: a root cause's signals usually leave their band before its victims'.
Among the candidates with a series out of band, the earliest first crossing ranks first.

An order is known only to the data's resolution: series recorded once a minute and probed
every 15 s leave their band on the same minute, whatever happened inside it. Crossings are
therefore counted in steps of the coarsest resolution among the series that crossed (the
median time between changes of value), and candidates in the same step tie. Abstains when
no series has a time at which it left its band.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..clock import iso
from ..facts import Facts, ProbeSeries
from ..model import Evidence
from ..series import assess
from .signal import Signal, all_nodes, votes


def resolution(s: ProbeSeries) -> float:
    """Median seconds between changes of value in the alert window (0: unknown)."""
    if len(s.alert_times) != len(s.alert) or len(s.alert) < 2:
        return 0.0
    values = np.asarray(s.alert)
    times = np.asarray(s.alert_times)
    changes = times[1:][np.diff(values) != 0]
    if len(changes) < 2:
        return float(np.median(np.diff(times)))
    return float(np.median(np.diff(changes)))


def onset(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    window = facts.windows.alert if facts.windows else None
    first: dict[str, tuple[float, str]] = {}
    step = 0.0
    for name in all_nodes(facts):
        for s in facts.probes.get(name, ()):
            t = assess(s, window)
            if not t.out or t.onset is None:
                continue
            step = max(step, resolution(s))
            if name not in first or t.onset < first[name][0]:
                first[name] = (t.onset, s.ref)
    if not first:
        return votes("onset", {}, abstained="no series left its band at a known time")
    earliest = min(t for t, _ in first.values())
    bucket = {n: int((t - earliest) // step) if step > 0 else 0 for n, (t, _) in first.items()}
    last = max(bucket.values())
    scores = {n: 1.0 + last - b for n, b in bucket.items()}
    evidence = {
        n: (Evidence("onset", f"{ref} left its band at {iso(t)}, {t - earliest:.0f} s after the "
                     f"first candidate's (resolution {step:.0f} s)", "metrics",
                     round(scores[n], 4), f"{n}/{ref}"),)
        for n, (t, ref) in first.items()
    }  # fmt: skip
    return votes("onset", scores, evidence, covered=[n for n, p in facts.probes.items() if p])
