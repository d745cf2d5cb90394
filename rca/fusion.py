"""Reciprocal rank fusion: each voting scorer ranks the candidates it found evidence for,
and a candidate's score is the sum of 1 / (RRF_K + rank) over the rankings that hold it.

Scale-free: a scorer's numbers only order its own candidates, so no noisy signal outvotes
the rest by magnitude, and no weight is set by hand. A scorer that abstained, or a candidate
it found nothing on, adds nothing. Tied candidates share the mean of their ranks.

Fused in two steps, by data source (`by_source`): first the scorers reading one source
(the metrics behind anomaly, telemetry, traversal and onset; the changes; the logs; the
spans) into one ranking per source, then those rankings into one. Scorers reading
the same data are not independent witnesses, so four views of the metrics count once,
beside one view of the changes, as lines of evidence do for the agent. A candidate a
scorer's data does not reach is neither for nor against: it gets that scorer's mean
contribution. Where a whole source reaches nothing of it (no series, no log line, no span),
it gets the source's mean in the second step, not a place in the source's ranking, where
that small mean would count as a vote almost as large as a first place.

The second step is a linear opinion pool: each source is one witness with one unit of
belief, spread over the candidates it ranks in proportion to 1 / (RRF_K + rank), and a
candidate's score is the mean of the sources' beliefs in it (in [0, 1]). A fault
shows in some modality, not necessarily in all; the source that names only the service
whose log lines burst gives it its whole unit, where a source uneasy about twenty services
gives each a twentieth. Summed unnormalised, rank fusion counts sources the way a vote
counts heads: with RRF_K = 60 and tens of candidates a first place is worth little more
than a twentieth, so any candidate two sources name at all outranks the one a single
source names alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .scorers.signal import Signal

__all__ = ["RRF_K", "by_source", "fractional_ranks", "rrf"]

RRF_K = 60.0
"""Cormack, Clarke and Büttcher (SIGIR 2009); GALA+ fuses its RCA rankings with the same."""


def fractional_ranks(scores: Mapping[str, float]) -> dict[str, float]:
    """1-based ranks, highest score first; ties share the mean of their positions."""
    order = sorted(scores.items(), key=lambda kv: -kv[1])
    out: dict[str, float] = {}
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and order[j + 1][1] == order[i][1]:
            j += 1
        for k in range(i, j + 1):
            out[order[k][0]] = (i + j) / 2 + 1
        i = j + 1
    return out


def rrf(
    signals: Mapping[str, Signal],
    voters: Iterable[str],
    names: Iterable[str] = (),
    unit: bool = False,
) -> dict[str, float]:
    """The fused score of every candidate any voter ranked. A candidate among `names` that a
    voter's data did not reach (`Signal.covered`) gets that voter's mean contribution over
    the candidates it did reach: unjudged is neither a vote for nor against. `unit`: each
    voter's contributions sum to one (the opinion pool of the module docstring)."""
    fused: dict[str, float] = {}
    universe = set(names)
    for name in voters:
        sig = signals.get(name)
        if sig is None or sig.abstained:
            continue
        given = {n: 1.0 / (RRF_K + r) for n, r in fractional_ranks(sig.scores).items()}
        total = sum(given.values())
        if unit and total > 0:
            given = {n: v / total for n, v in given.items()}
        if sig.covered is not None and sig.covered:
            mean = sum(given.values()) / len(sig.covered)
            given |= dict.fromkeys(universe - sig.covered, mean)
        for node, v in given.items():
            if v > 0:
                fused[node] = fused.get(node, 0.0) + v
    return fused


def by_source(
    signals: Mapping[str, Signal],
    voters: Iterable[str],
    source_of: Mapping[str, str],
    names: Iterable[str] = (),
) -> dict[str, float]:
    """RRF within each data source, then the opinion pool of the per-source rankings (module
    docstring); a voter without a declared source is a source of its own."""
    universe = list(names)
    groups: dict[str, list[str]] = {}
    for name in voters:
        groups.setdefault(source_of.get(name, name), []).append(name)
    per_source: dict[str, Signal] = {}
    for source, members in groups.items():
        reach = _reached(signals, members)
        inside = universe if reach is None else [n for n in universe if n in reach]
        per_source[source] = Signal(source, rrf(signals, members, inside), covered=reach)
    pooled = rrf(per_source, list(per_source), universe, unit=True)
    voted = sum(1 for sig in per_source.values() if sig.scores)
    return {node: v / voted for node, v in pooled.items()} if voted else pooled


def _reached(signals: Mapping[str, Signal], members: Iterable[str]) -> frozenset[str] | None:
    """The candidates any voting member's data reaches (None: all). A candidate a source
    does not reach at all gets the source's mean contribution in the second step, not a
    place in its ranking: ranked there, the small mean it was given would count as a vote."""
    reach: set[str] = set()
    for name in members:
        sig = signals.get(name)
        if sig is None or sig.abstained:
            continue
        if sig.covered is None:
            return None
        reach |= sig.covered
    return frozenset(reach)
