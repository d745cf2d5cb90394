"""A candidate's own metrics against its baseline: does any series leave its band, and by
how much (`rca.series.assess`, robust to short, flat and all-zero baselines)?

A service's calls as its callers see them (`<kind>/from:<caller>` series) count as its own
latency and errors. The vote is the largest effect (symmetric relative change, bounded) among
its series that left their band; kinds are not weighted against each other, the change is
scale-free. A candidate with no series out of band gets no vote; the scorer abstains when
nothing was probed at all.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..facts import Facts
from ..model import Evidence
from ..series import SeriesTest, assess
from .signal import Signal, all_nodes, votes

SHOWN = 3
"""Series quoted in a candidate's evidence, strongest first."""


def judged(facts: Facts) -> dict[str, list[tuple[SeriesTest, str]]]:
    """Every candidate's series verdicts, with the series' `kind/name`."""
    window = facts.windows.alert if facts.windows else None
    return {
        name: [(assess(s, window), s.ref) for s in facts.probes.get(name, ())]
        for name in all_nodes(facts)
    }


def anomaly(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    """Vote: the largest effect among a candidate's series that left their band."""
    if not any(facts.probes.values()):
        return votes("anomaly", {}, abstained="no metrics were probed")
    scores: dict[str, float] = {}
    evidence: dict[str, tuple[Evidence, ...]] = {}
    for name, tests in judged(facts).items():
        out = sorted((t for t in tests if t[0].out), key=lambda t: -t[0].effect)
        if out:
            scores[name] = out[0][0].effect
            evidence[name] = tuple(
                Evidence("anomaly", t.phrase, facts.probe_source, t.effect, f"{name}/{ref}")
                for t, ref in out[:SHOWN]
            )
        elif tests and all(t.case == "short" for t, _ in tests):
            evidence[name] = (
                Evidence("anomaly", f"{len(tests)} series, none with a baseline of 3 points",
                         facts.probe_source, 0.0, f"{name}/*"),
            )  # fmt: skip
    return votes("anomaly", scores, evidence, covered=[n for n, p in facts.probes.items() if p])
