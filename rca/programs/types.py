"""The types a program's values have, and the records that carry them between bindings.

    Window            the alert and baseline windows            rca.windows.Windows
    CandidateSet      the anchor's neighbourhood: nodes, edges  rca.facts.Facts
    Telemetry         one source's data on those candidates     rca.facts.Facts
    Aggregate         candidates with all their telemetry       rca.facts.Facts
    ScoredCandidates  one scorer's votes, evidence, abstention  Scored
    RankedAnswer      the fused ranking                         Answer

Parameters are literals of the data types Number, Set (a list of names) and Candidate (one
service name), or `auto`. An operator's kind follows from what it returns (`KIND`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..model import Candidate
from ..scorers import Signal

__all__ = [
    "AGGREGATE",
    "ANSWER",
    "AUTO",
    "CANDIDATE",
    "CANDIDATES",
    "KIND",
    "NUMBER",
    "PARAM_TYPES",
    "SCORED",
    "SET",
    "TELEMETRY",
    "VALUE_TYPES",
    "WINDOW",
    "Answer",
    "Scored",
]

WINDOW = "Window"
CANDIDATES = "CandidateSet"
TELEMETRY = "Telemetry"
AGGREGATE = "Aggregate"
SCORED = "ScoredCandidates"
ANSWER = "RankedAnswer"
VALUE_TYPES = (WINDOW, CANDIDATES, TELEMETRY, AGGREGATE, SCORED, ANSWER)

NUMBER = "Number"
SET = "Set"
CANDIDATE = "Candidate"
PARAM_TYPES = (NUMBER, SET, CANDIDATE)
AUTO = "auto"
"""A parameter the engine estimates from the data; the plan says what it chose."""

KIND: Mapping[str, str] = {
    WINDOW: "window",
    CANDIDATES: "generator",
    TELEMETRY: "source",
    AGGREGATE: "aggregator",
    SCORED: "scorer",
    ANSWER: "ranker",
}


@dataclass(frozen=True)
class Scored:
    """A scorer's output with what the fusion needs to know of it: the data source it
    read (scorers of one source count once) and whether it only breaks ties."""

    signal: Signal
    source: str | None = None
    prior: bool = False


@dataclass(frozen=True)
class Answer:
    """The program's answer: candidates best first, and every scored binding by name."""

    candidates: Sequence[Candidate]
    signals: Mapping[str, Signal] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)
    """Voting binding → the data source it read."""
    priors: tuple[str, ...] = ()
