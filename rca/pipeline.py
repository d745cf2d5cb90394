"""Playbooks: a declared pipeline of generators → scorers → reciprocal rank fusion.

A playbook names its parts (from `GENERATORS` and `SCORERS`); every scorer but the priors
votes, and `rca.fusion.by_source` fuses the votes, once per data source (no hand-set
weights). The priors only break ties. It is frozen, so a caller cannot change the default
for everyone. Compose another one from the same parts with `Playbook(...)` or
`DEFAULT.with_(...)`.

    quick = DEFAULT.with_(name="no-probes", generators=("khop", "changes"))
    plan = investigate(store, alert, playbook=quick)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from stackgraph.store import GraphReader

from .collect import GENERATORS
from .facts import Facts, Request
from .fusion import by_source, rrf
from .model import Candidate, Evidence
from .scorers import (
    Scorer,
    Signal,
    all_nodes,
    anomaly,
    blame,
    centrality,
    change,
    failed_calls,
    history,
    instability,
    logs,
    onset,
    self_time,
    telemetry,
    topology,
    traversal,
)

SCORERS: dict[str, Scorer] = {
    "topology": topology,
    "telemetry": telemetry,
    "anomaly": anomaly,
    "change": change,
    "history": history,
    "blame": blame,
    "traversal": traversal,
    "onset": onset,
    "logs": logs,
    "failed_calls": failed_calls,
    "instability": instability,
    "centrality": centrality,
    "self_time": self_time,
}
"""Named scorers. Order matters only in that blame and traversal read anomaly and telemetry."""

SOURCES: Mapping[str, str] = MappingProxyType({
    "telemetry": "metrics",
    "anomaly": "metrics",
    "blame": "metrics",
    "traversal": "metrics",
    "onset": "metrics",
    "change": "changes",
    "history": "outcomes",
    "logs": "logs",
    "failed_calls": "traces",
    "instability": "traces",
    "self_time": "traces",
})  # fmt: skip
"""The data each voter reads: the metrics source's series and Tempo's graph, the change
lane's releases, past validated outcomes, log lines, spans (with the log lines naming them)."""


@dataclass(frozen=True)
class Playbook:
    """A named, frozen recipe: which generators gather facts, which scorers judge them, and
    which of those are priors (tie-breakers) rather than votes."""

    name: str
    generators: tuple[str, ...]
    scorers: tuple[str, ...]
    priors: tuple[str, ...] = ("topology", "centrality")
    sources: Mapping[str, str] = field(default_factory=lambda: dict(SOURCES))
    """Scorer → the data source it reads; the fusion counts each source once (`by_source`)."""
    alert_span_s: float = 600.0
    """Alert window when the alert gives no start: the 10 minutes before `at`."""
    alert_lead_s: float = 300.0
    """How far before the alert fired its window starts: 5 minutes, the customary rate
    window of an alerting rule, over which its cause had to move for it to fire."""
    baseline_span_s: float = 1200.0
    """Baseline window: the 20 minutes before the alert window."""

    def __post_init__(self) -> None:
        unknown = [g for g in self.generators if g not in GENERATORS]
        unknown += [s for s in (*self.scorers, *self.priors, *self.sources) if s not in SCORERS]
        if unknown:
            raise ValueError(f"playbook {self.name!r}: unknown part(s) {unknown}")
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))

    @property
    def voters(self) -> tuple[str, ...]:
        return tuple(s for s in self.scorers if s not in self.priors)

    def with_(self, **changes: Any) -> Playbook:
        return replace(self, **changes)


DEFAULT = Playbook(
    name="default",
    generators=("khop", "callers", "changes", "history", "probes", "logs", "traces"),
    scorers=("topology", "telemetry", "anomaly", "change", "history", "blame", "traversal",
             "onset", "logs", "failed_calls", "instability", "centrality", "self_time"),
)  # fmt: skip

PLAYBOOKS: Mapping[str, Playbook] = MappingProxyType({DEFAULT.name: DEFAULT})


def gather(store: GraphReader, request: Request, facts: Facts, playbook: Playbook) -> Facts:
    for name in playbook.generators:
        facts = GENERATORS[name](store, request, facts)
    return facts


def score(facts: Facts, playbook: Playbook) -> dict[str, Signal]:
    signals: dict[str, Signal] = {}
    for name in playbook.scorers:
        signals[name] = SCORERS[name](facts, signals)
    return signals


def suggested_tools(kind: str, evidence: list[Evidence], has_logs: bool = False) -> tuple[str, ...]:
    """The checks that can confirm or refute a candidate, most telling first.

    Telemetry evidence (a Tempo edge into the candidate) leads with `query_stack_graph`,
    the one offline check that reads those edges' error rate and p95, so the agent's
    floor verifies what the plan ranked on even with no Prometheus, cluster or Git. A
    candidate the log source has lines of (`has_logs`), or log evidence for, gets
    `loki_query`: its error lines then and before, from Loki or the same log files. A
    candidate whose CPU or memory left its band gets that signal measured too.
    """
    tools = ["prometheus_query"]
    for resource in ("cpu", "memory"):  # what the anomaly rose on, as the agent can see it
        if any(e.signal == "anomaly" and f"/{resource}/" in f"{e.ref}/" for e in evidence):
            tools.append(f"prometheus_query:{resource}")
    if any(e.signal == "telemetry" for e in evidence):
        tools.insert(0, "query_stack_graph")
    if has_logs or any(e.signal == "logs" for e in evidence):
        tools.append("loki_query")
    if kind == "Service":
        tools.append("k8s_events")
    kinds = {(e.ref or "").split(":", 1)[0] for e in evidence if e.signal == "change"}
    if "Change" in kinds:
        tools.append("git_log")
    if "Deploy" in kinds:
        tools.append("flux_status")
    return tuple(tools)


def combine(facts: Facts, signals: Mapping[str, Signal], playbook: Playbook) -> list[Candidate]:
    """Pure: the fused ranking, each candidate with every scorer's vote in its breakdown,
    its evidence and how to check it. Equal fused scores go to the candidate more views
    agree on (flat RRF over every voter), then to the priors, then by name."""
    nodes = all_nodes(facts)
    fused = by_source(signals, playbook.voters, playbook.sources, nodes)
    views = rrf(signals, playbook.voters, nodes)
    out: list[Candidate] = []
    for name, node in nodes.items():
        breakdown = {
            s: round(float(signals[s].scores.get(name, 0.0)), 4)
            for s in playbook.scorers
            if s in playbook.priors or name in signals[s].scores
        }
        evidence: list[Evidence] = []
        for s in playbook.scorers:
            evidence.extend(signals[s].evidence.get(name, ()))
        paths = facts.paths.get(name, ((name,),) if name == facts.anchor else ())
        out.append(
            Candidate(
                service=name,
                score=round(fused.get(name, 0.0), 5),
                signals=breakdown,
                paths=tuple(tuple(p) for p in paths),
                evidence=tuple(evidence),
                suggested_tools=suggested_tools(node.label, evidence, name in facts.logs),
                kind=node.label,
                position=node.position,
            )
        )
    order = ranked(list(nodes), fused, views, [signals[p].scores for p in playbook.priors])
    at = {name: i for i, name in enumerate(order)}
    out.sort(key=lambda c: at[c.service])
    return out


def ranked(
    names: Sequence[str],
    fused: Mapping[str, float],
    views: Mapping[str, float],
    priors: Sequence[Mapping[str, float]],
) -> list[str]:
    """The plan's order: fused score, then how many views agree (flat RRF), then each prior
    in turn, then the name."""
    return sorted(names, key=lambda n: (-fused.get(n, 0.0), -views.get(n, 0.0),
                                        *(-p.get(n, 0.0) for p in priors), n))  # fmt: skip


def abstentions(signals: Mapping[str, Signal]) -> tuple[str, ...]:
    """One note per scorer that judged nothing, saying why."""
    return tuple(f"{n} abstained: {s.abstained}" for n, s in signals.items() if s.abstained)
