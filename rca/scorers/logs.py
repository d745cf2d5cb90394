"""Logs: bursts of error lines, and lines of templates the baseline never showed.

Per candidate, over its own log lines (`Facts.logs`):

- **errors**: ERROR/FATAL lines in the alert window against the baseline's rate. Counts of
  rare events are Poisson: the burst is out when P(X >= count) < OUT_P under the baseline
  rate scaled to the alert window (the baseline count plus one half, Jeffreys' estimate,
  so a baseline without a single error line still gives a finite rate);
- **new templates**: lines whose template (drain3, mined on the baseline's lines with the
  library's defaults) the baseline never showed. Some are new in any window (a baseline is
  a sample of what a service logs), so the usual rate of them is measured, not assumed:
  the baseline's second half against templates mined on its first half (a held-out
  estimate; it sees less than the full baseline, so it errs toward "usual"). The alert
  window's count is tested against that rate as above; judged only when the baseline has
  MIN_BASELINE_LINES lines to mine.

The vote is the larger surprise, -log10 of the tail probability. A candidate without a
line in the baseline window gets no verdict (a burst is only a burst against something);
the scorer abstains when no candidate has a log line in either window.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from drain3 import TemplateMiner
from drain3.template_miner_config import TemplateMinerConfig
from scipy.stats import poisson

from ..facts import Facts
from ..model import Evidence, LogLine
from .signal import Signal, votes

OUT_P = 0.00135
"""One-sided tail of the three-sigma rule (rca.series.OUT_Z), for counts."""
JEFFREYS = 0.5
"""Added to a baseline count: the Jeffreys prior's estimate of a Poisson rate."""
MIN_BASELINE_LINES = 20
"""Fewer lines are too few to say which templates are usual."""
ERROR_LEVELS = ("ERROR", "FATAL")


def surprise(count: int, baseline: int, span_a: float, span_b: float) -> float:
    """-log10 P(X >= count) for X Poisson with the baseline's rate over the alert window."""
    if count <= 0 or span_a <= 0 or span_b <= 0:
        return 0.0
    rate = (baseline + JEFFREYS) / span_b * span_a
    p = float(poisson.sf(count - 1, rate))
    return -math.log10(max(p, 1e-300))


def new_template_lines(
    base: Sequence[LogLine], alert: Sequence[LogLine], mid: float | None = None
) -> tuple[list[LogLine], list[LogLine]]:
    """(alert lines whose template no baseline line has, baseline lines from `mid` on whose
    template no line before `mid` has): one miner, fed the baseline's halves in turn."""
    config = TemplateMinerConfig()
    config.profiling_enabled = False
    miner = TemplateMiner(config=config)
    first = [x for x in base if mid is None or x.t < mid]
    second = [x for x in base if mid is not None and x.t >= mid]
    for line in first:
        miner.add_log_message(line.text)
    usual = [line for line in second if miner.match(line.text) is None]
    for line in second:
        miner.add_log_message(line.text)
    return [line for line in alert if miner.match(line.text) is None], usual


def logs(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    if not facts.logs or facts.windows is None:
        return votes("logs", {}, abstained="no log lines of any candidate")
    (a0, a1), (b0, b1) = facts.windows.alert, facts.windows.baseline
    span_a, span_b = a1 - a0, b1 - b0
    scores: dict[str, float] = {}
    evidence: dict[str, tuple[Evidence, ...]] = {}
    for name, (base, alert) in facts.logs.items():
        if not base:  # a burst is a burst against something: no baseline lines, no verdict
            evidence[name] = (Evidence("logs", f"{len(alert)} line(s) in the alert window, none "
                                       "in the baseline: nothing to compare", "logs", 0.0,
                                       f"logs:{name}"),)  # fmt: skip
            continue
        errs_a = sum(1 for x in alert if x.level in ERROR_LEVELS)
        errs_b = sum(1 for x in base if x.level in ERROR_LEVELS)
        found: list[tuple[float, str]] = []
        s = surprise(errs_a, errs_b, span_a, span_b)
        if s >= -math.log10(OUT_P):
            found.append((s, f"{errs_a} error line(s) in the alert window, {errs_b} in the "
                             f"baseline ({len(base)} line(s)): surprise {s:.1f}"))  # fmt: skip
        if len(base) >= MIN_BASELINE_LINES:
            new, usual = new_template_lines(base, alert, mid=b0 + span_b / 2)
            s = surprise(len(new), len(usual), span_a, span_b / 2)
            if s >= -math.log10(OUT_P):
                found.append((s, f"{len(new)} line(s) of templates the baseline never showed "
                                 f"(its second half: {len(usual)} new to its first), "
                                 f"e.g. {new[0].text[:120]!r}: surprise {s:.1f}"))  # fmt: skip
        if found:
            best = max(found)
            scores[name] = best[0]
            evidence[name] = tuple(
                Evidence("logs", why, "logs", round(v, 2), f"logs:{name}") for v, why in found
            )
    return votes("logs", scores, evidence, covered=[n for n, (b, _) in facts.logs.items() if b])
