"""Logs: bursts of error lines, lines of templates the baseline never showed, and templates
that fell silent.

Per candidate, over its own log lines (`Facts.logs`):

- **errors**: ERROR/FATAL lines in the alert window against the baseline's rate. Counts of
  rare events are Poisson: the burst is out when P(X >= count) < OUT_P under the baseline
  rate scaled to the alert window (the baseline count plus one half, Jeffreys' estimate,
  so a baseline without a single error line still gives a finite rate);
- **new templates**: lines whose template the baseline never showed. A line's template is
  the log statement that wrote it: its caller site where the line names one (`site`: a
  dotted class and line, `t.s.TravelServiceImpl#366`, or `file.go:42`), since a statement is
  its place in the code and two statements' lines can read alike; else its drain3 cluster,
  mined on the baseline's lines with the library's defaults. Some are new in any window (a
  baseline is a sample of what a service logs), so the usual share of them is measured, not
  assumed: the baseline's second half against templates mined on its first half (a held-out
  estimate; it sees less than the full baseline, so it errs toward "usual"). Novelty is a
  property of a line, so the unit is the line, not the second: the alert window's count is
  the binomial upper tail among its lines under that share (Jeffreys' estimate), and a
  service writing twice the lines writes twice the new ones. Judged only when the baseline
  has MIN_BASELINE_LINES lines to mine and its second half has lines to hold out (a half the
  source recorded nothing of estimates nothing);
- **dropped templates**: a code path that stops running stops writing its lines (an
  exception thrown between two log statements leaves the first and silences the second).
  Per template the baseline showed, its share of the service's lines in the alert window
  against its share in the baseline (a share, so a change of load does not move it), as
  the binomial lower tail, Bonferroni-corrected over the service's templates; error-level
  lines are left out (fewer errors is no fault). Judged with the new templates. Nor does a
  change in who calls move it: where the spans say whose request a line was written in
  (`callers_of`: the line's span, up to the first span of another service), a template's
  expected share is its share of each caller's baseline lines, weighted by that caller's
  part of the window (strata, as Mantel and Haenszel stratify a confounder; lines of an
  unknown caller keep the pooled share). A caller that stopped calling one endpoint (its
  own flow broke upstream) takes that endpoint's lines with it; within each caller's lines
  nothing fell, and the service is not blamed for it. The binomial with that mean share is
  the test: a sum of binomials with unequal shares is less dispersed than it (Hoeffding,
  1956), so its tail errs toward "usual".

Each test looks at every stretch of the alert window that ends at the alert and starts a
whole minute back (`LOOK_STEP_S`: the last minute, the last two, ..., the whole window), and
keeps the strongest look, Bonferroni-corrected over the looks. The vote is the larger
surprise, -log10 of the tail probability, beyond the largest of the services it calls (the
frontier rule of `telemetry` and `traversal`, and of the agent's `loki_query`): a caller of
a failing service logs the failures it gets back, so where a callee burst as strongly, the
caller's burst is the callee's seen through it, and it keeps only its own part. A
candidate without a line in the baseline window gets no verdict (a burst is only a burst
against something); the scorer abstains when no candidate has a log line in either window.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain

import numpy as np
from drain3 import TemplateMiner
from drain3.template_miner_config import TemplateMinerConfig
from scipy.special import bdtr, bdtrc, pdtrc

from stackgraph.ingest.lanes.telemetry import Span

from ..facts import Facts
from ..model import Evidence, LogLine
from ..windows import Windows
from .signal import Signal, votes

OUT_P = 0.00135
"""One-sided tail of the three-sigma rule (rca.series.OUT_Z), for counts."""
JEFFREYS = 0.5
"""Added to a count: Jeffreys' estimate of a Poisson rate, and of a share (then twice to
its total: the mean of the Beta(1/2, 1/2) posterior)."""
LOOK_STEP_S = 60.0
"""An alert fires while its cause is present, which may have begun anywhere in the window:
a cause present for its last part is judged on that part, not diluted by the minutes
before it. Lines carry their own times, so the onset is scanned, a minute apart: the
default rate window of the read path's series (`Settings.metrics_window`, 1m), the finest
onset the metrics fused with the logs show. Each test takes the strongest look, its tail
Bonferroni-corrected for their number (five in a five-minute window)."""
Caller = Callable[[LogLine], str]
"""The service whose request a line was written in ("": unknown)."""
MIN_BASELINE_LINES = 20
"""Fewer lines are too few to say which templates are usual."""
ERROR_LEVELS = ("ERROR", "FATAL")


def surprise(count: int, baseline: int, span_a: float, span_b: float) -> float:
    """-log10 P(X >= count) for X Poisson with the baseline's rate over the alert window."""
    if count <= 0 or span_a <= 0 or span_b <= 0:
        return 0.0
    rate = (baseline + JEFFREYS) / span_b * span_a
    p = float(pdtrc(count - 1, rate))  # P(X >= count): scipy.stats' sf, without its overhead
    return -math.log10(max(p, 1e-300))


def jeffreys_share(count: float | np.ndarray, total: float) -> float | np.ndarray:
    """count / total by Jeffreys' estimate (the Beta(1/2, 1/2) posterior mean): never 0 or
    1, so a share no line showed still has a tail. Elementwise on arrays."""
    return (count + JEFFREYS) / (total + 2 * JEFFREYS)


def share_surprise(count: int, lines: int, base_count: int, base_lines: int) -> float:
    """-log10 P(X >= count), X ~ Binomial(lines, the share base_count / base_lines by
    Jeffreys' estimate)."""
    if count <= 0 or lines <= 0:
        return 0.0
    share = jeffreys_share(base_count, base_lines)
    return -math.log10(max(float(bdtrc(count - 1, lines, share)), 1e-300))


_SITE = re.compile(
    r"(?<![\w.$])((?:[A-Za-z_$][\w$]*\.)+[A-Za-z_$][\w$]*#\d+"
    r"|[A-Za-z_$][\w$.]*\.(?:java|kt|scala|groovy|go|py|rb|js|ts|php|cs|rs|c|cc|cpp|h):\d+)\b"
)
"""A caller site as loggers print it: a dotted class and its line (logback's `%logger#%line`,
`t.s.TravelServiceImpl#366`), or a source file and its line (`handler.go:42`, `views.py:88`).
The dot keeps an id (`worker#3`, `Order#1234`) from reading as one, and the file's extension
a `host:8080`."""


def site(text: str) -> str | None:
    """The caller site a log line names, if it names one."""
    m = _SITE.search(text)
    return m.group(1) if m else None


@dataclass(frozen=True)
class Templates:
    """A service's lines by template (module docstring), learned on its baseline."""

    new: list[LogLine]
    """Alert lines whose template no baseline line has."""
    usual: list[LogLine]
    """Baseline lines from its middle on whose template no line before it has."""
    held: int
    """Baseline lines from its middle on: what `usual` is a share of."""
    base: Counter[str]
    """Baseline lines per template, error-level lines left out."""
    alert: Counter[str]
    """Alert lines per template the baseline showed, error-level lines left out."""
    names: dict[str, str]
    base_by: Counter[tuple[str, str]] = field(default_factory=Counter)
    """`base` per (caller, template): whose requests the lines were written in."""
    alert_by: Counter[tuple[str, str]] = field(default_factory=Counter)
    """`alert` per (caller, template)."""


Keyed = tuple[LogLine, str | None, str]
"""An alert line, its template (None: one the baseline never showed) and its caller."""


class Learned:
    """A service's baseline lines by template: by caller site where a line names one, else
    by drain3 cluster; fed the baseline's halves (before and from `mid`) in turn. With
    `caller`, by caller too (`dropped`)."""

    def __init__(
        self, base: Sequence[LogLine], mid: float | None = None, caller: Caller | None = None
    ) -> None:
        config = TemplateMinerConfig()
        config.profiling_enabled = False
        self.drain = TemplateMiner(config=config)
        self.sites: set[str] = set()
        first = [x for x in base if mid is None or x.t < mid]
        second = [x for x in base if mid is not None and x.t >= mid]
        ids = [self._add(x, site(x.text)) for x in first]
        at2 = [site(x.text) for x in second]
        # the baseline's lines from its middle on whose template no line before it has
        self.usual = [x for x, at in zip(second, at2, strict=True) if self._match(x, at) is None]
        ids += [self._add(x, at) for x, at in zip(second, at2, strict=True)]
        self.held = len(second)
        kept = [(x, k) for k, x in zip(ids, (*first, *second), strict=True)
                if x.level not in ERROR_LEVELS]  # fmt: skip
        self.base = Counter(k for _, k in kept)
        self.caller = caller
        self.base_by = Counter((caller(x), k) for x, k in kept) if caller else Counter()
        # matching adds no template, so the names are those learned
        self.names = {f"drain {c.cluster_id}": c.get_template() for c in self.drain.drain.clusters}
        self.names |= {f"at {at}": at for at in self.sites}

    def _add(self, x: LogLine, at: str | None) -> str:
        if at is not None:
            self.sites.add(at)
            return f"at {at}"
        return f"drain {self.drain.add_log_message(x.text)['cluster_id']}"

    def _match(self, x: LogLine, at: str | None) -> str | None:
        if at is not None:
            return f"at {at}" if at in self.sites else None
        cluster = self.drain.match(x.text)
        return None if cluster is None else f"drain {cluster.cluster_id}"

    def keyed(self, alert: Sequence[LogLine]) -> list[Keyed]:
        """Each alert line with its template and its caller ("" without `caller`)."""
        who = self.caller or (lambda _: "")
        return [(x, self._match(x, site(x.text)), who(x)) for x in alert]

    def templates(self, keyed: Iterable[Keyed]) -> Templates:
        """Keyed alert lines (`keyed`) counted against the baseline's templates."""
        new: list[LogLine] = []
        seen: Counter[str] = Counter()
        seen_by: Counter[tuple[str, str]] = Counter()
        for x, key, who in keyed:
            if key is None:
                new.append(x)
            elif x.level not in ERROR_LEVELS:
                seen[key] += 1
                seen_by[(who, key)] += 1
        return Templates(new, self.usual, self.held, self.base, seen, self.names, self.base_by,
                         seen_by if self.caller else Counter())  # fmt: skip


def mine(base: Sequence[LogLine], alert: Sequence[LogLine], mid: float | None = None) -> Templates:
    """One look at the alert lines against templates learned on `base`."""
    learned = Learned(base, mid)
    return learned.templates(learned.keyed(alert))


def dropped(t: Templates) -> tuple[float, str | None]:
    """The strongest fall of a template's share of the service's lines, as -log10 of its
    binomial lower tail (the baseline's share by Jeffreys' estimate), Bonferroni-corrected
    over the templates tested; (0, None) when the alert window has no line to share."""
    n_b, n_a = sum(t.base.values()), sum(t.alert.values())
    if n_b == 0 or n_a == 0:
        return 0.0, None
    ids = list(t.base)
    share = jeffreys_share(np.array([t.base[k] for k in ids]), n_b)
    if t.alert_by:
        share = _by_caller(t, ids, share, n_a)
    tail = bdtr(np.array([t.alert.get(k, 0) for k in ids]), n_a, share)
    i = int(np.argmin(tail))
    s = -math.log10(max(min(1.0, len(ids) * float(tail[i])), 1e-300))
    return (s, ids[i]) if s > 0 else (0.0, None)


def _by_caller(
    t: Templates, ids: Sequence[str], pooled: float | np.ndarray, n_a: int
) -> np.ndarray:
    """Each template's expected share of the alert window's lines, its callers' mix taken
    as it is: per caller, its share of that caller's baseline lines, weighted by that
    caller's part of the window. Lines whose caller is unknown (a span not yet ended when
    the window was read, an untraced job) and callers the baseline has no line of get the
    pooled share: unknown is no stratum, the lines of a few untraced jobs would stand for
    all of them."""
    base_n: Counter[str] = Counter()
    alert_n: Counter[str] = Counter()
    for counts, by in ((base_n, t.base_by), (alert_n, t.alert_by)):
        for (who, _), n in by.items():
            counts[who] += n
    out = np.zeros(len(ids))
    for who, n in alert_n.items():
        own = (jeffreys_share(np.array([t.base_by[(who, k)] for k in ids]), base_n[who])
               if who and base_n[who] else pooled)  # fmt: skip
        out += n / n_a * own
    return out


def bursts(
    base: Sequence[LogLine], alert: Sequence[LogLine], windows: Windows,
    caller: Caller | None = None,
) -> list[tuple[str, float, str]]:  # fmt: skip
    """Each out-of-band test of a service's lines, (test, surprise, why), the test one of
    "errors", "new" and "dropped": per test, the strongest of the window's looks (`looks`).
    The agent's `loki_query` runs the template tests on a suspect's lines too."""
    (a0, a1), (b0, b1) = windows.alert, windows.baseline
    mid = b0 + (b1 - b0) / 2
    learned = Learned(base, mid, caller) if len(base) >= MIN_BASELINE_LINES else None
    keyed = learned.keyed(alert) if learned else []
    errs_b = sum(1 for x in base if x.level in ERROR_LEVELS)
    best: dict[str, tuple[float, str]] = {}
    starts = looks(windows)
    for start in starts:
        where = "the alert window" if start <= a0 else f"its last {(a1 - start) / 60:.0f} min"
        lines = [x for x in alert if x.t >= start]
        errs_a = sum(1 for x in lines if x.level in ERROR_LEVELS)
        why = f"{errs_a} error line(s), {errs_b} in the baseline ({len(base)} line(s))"
        found = [("errors", surprise(errs_a, errs_b, a1 - start, b1 - b0), why)]
        if learned:
            found += _templates(lines, learned.templates(k for k in keyed if k[0].t >= start))
        for test, s, why in found:
            s -= math.log10(len(starts))
            if s >= -math.log10(OUT_P) and s > best.get(test, (0.0, ""))[0]:
                best[test] = (s, f"{why} in {where}: surprise {s:.1f}")
    return [(test, s, why) for test, (s, why) in best.items()]


def callers_of(spans: Iterable[Span]) -> Caller | None:
    """Who called the service a line was written in: the service of the nearest span above
    the line's own that is another service's ("" where the spans do not say). None without
    spans."""
    by_id = {(s.trace_id, s.span_id): s for s in spans}
    if not by_id:
        return None

    def caller(line: LogLine) -> str:
        span = by_id.get((line.trace_id, line.span_id))
        seen: set[str] = set()  # a span that is its own ancestor (bad input) ends the walk
        while span is not None and span.service == line.service and span.span_id not in seen:
            seen.add(span.span_id)
            span = by_id.get((span.trace_id, span.parent_id)) if span.parent_id else None
        return span.service if span is not None and span.service != line.service else ""

    return caller


def looks(windows: Windows) -> list[float]:
    """Where each look at the alert window starts: a whole minute back from its end, and
    its start (`LOOK_STEP_S`)."""
    a0, a1 = windows.alert
    steps = max(1, math.ceil((a1 - a0) / LOOK_STEP_S - 1e-9))
    return [max(a0, a1 - k * LOOK_STEP_S) for k in range(1, steps + 1)]


def _templates(alert: Sequence[LogLine], t: Templates) -> list[tuple[str, float, str]]:
    """The template tests on one look at the window, (test, surprise, why)."""
    found: list[tuple[str, float, str]] = []
    if t.held and t.new:
        found.append(("new", share_surprise(len(t.new), len(alert), len(t.usual), t.held),
                      f"{len(t.new)} of {len(alert)} line(s) of templates the baseline never "
                      f"showed (its second half: {len(t.usual)} of {t.held} new to its first), "
                      f"e.g. {t.new[0].text[:120]!r}"))  # fmt: skip
    s, k = dropped(t)
    if k is not None:
        n_b, n_a = sum(t.base.values()), sum(t.alert.values())
        callers = len({who for who, _ in t.alert_by})
        mix = f", its {callers} caller(s)' mix taken as it is" if t.alert_by else ""
        found.append(("dropped", s, f"{t.alert.get(k, 0)} of {n_a} line(s) of the template "
                      f"{t.names[k][:120]!r}, {t.base[k]} of {n_b} in the baseline (over "
                      f"{len(t.base)} templates{mix}): a code path that stopped "
                      "running"))  # fmt: skip
    return found


def logs(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    if not facts.logs or facts.windows is None:
        return votes("logs", {}, abstained="no log lines of any candidate")
    evidence: dict[str, tuple[Evidence, ...]] = {}
    found: dict[str, list[tuple[float, str]]] = {}
    caller = callers_of(chain(*facts.traces))
    for name, (base, alert) in facts.logs.items():
        if not base:  # a burst is a burst against something: no baseline lines, no verdict
            evidence[name] = (Evidence("logs", f"{len(alert)} line(s) in the alert window, none "
                                       "in the baseline: nothing to compare", "logs", 0.0,
                                       f"logs:{name}"),)  # fmt: skip
            continue
        found[name] = [(v, why) for _, v, why in bursts(base, alert, facts.windows, caller)]
    own = {name: max(f)[0] for name, f in found.items() if f}
    calls: dict[str, set[str]] = defaultdict(set)
    for e in facts.edges:
        if e.src != e.dst:
            calls[e.src].add(e.dst)
    scores: dict[str, float] = {}
    for name, strength in own.items():
        below, by = max(((own.get(c, 0.0), c) for c in calls[name]), default=(0.0, ""))
        why = [Evidence("logs", w, "logs", round(v, 2), f"logs:{name}") for v, w in found[name]]
        if below > 0:
            part = max(0.0, strength - below)
            why.append(Evidence("logs", f"{by}, which it calls, burst too (surprise {below:.1f}): "
                                f"its own part {part:.1f}", "logs", round(part, 2),
                                f"logs:{by}"))  # fmt: skip
        scores[name] = strength - below
        evidence[name] = tuple(why)
    return votes("logs", scores, evidence, covered=[n for n, (b, _) in facts.logs.items() if b])
