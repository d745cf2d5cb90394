"""Traversal from the symptom: walk the call graph callee-wards from the alerting service,
through services that look anomalous (their own series or the calls into them moved) or
that nothing measures, and vote for the anomalous ones where the walk stops, those whose
own dependencies show nothing: the frontier, where the anomaly starts.

The alerting service itself is on the frontier when none of its dependencies looks
anomalous. A monitored service that looks healthy stops the walk; an unmonitored one (no
probes) does not, since absence of data is not health. Ranked by the candidate's own
strength. Abstains when no scorer before it found anything anomalous.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Mapping

from ..facts import Facts
from ..model import Evidence
from .signal import Signal, all_nodes, votes

STRENGTH_FROM = ("anomaly", "telemetry")
"""The scorers whose votes make a service look anomalous."""


def strength(prior: Mapping[str, Signal]) -> dict[str, float]:
    out: dict[str, float] = {}
    for name in STRENGTH_FROM:
        sig = prior.get(name)
        for node, v in sig.scores.items() if sig else ():
            out[node] = max(out.get(node, 0.0), v)
    return out


def traversal(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    """Vote for the frontier of the anomaly reached from the symptom."""
    hot = strength(prior)
    if not hot:
        return votes("traversal", {}, abstained="nothing around the anchor looks anomalous")
    nodes = all_nodes(facts)
    children: dict[str, set[str]] = defaultdict(set)
    for e in facts.edges:
        if e.src != e.dst and e.src in nodes and e.dst in nodes:
            children[e.src].add(e.dst)

    def passable(n: str) -> bool:
        return n in hot or not facts.probes.get(n)

    reached: dict[str, tuple[str, ...]] = {facts.anchor: (facts.anchor,)}
    queue = deque([facts.anchor])
    while queue:
        n = queue.popleft()
        for c in sorted(children[n]):
            if c not in reached and passable(c):
                reached[c] = (*reached[n], c)
                queue.append(c)

    def below(n: str) -> set[str]:
        """Anomalous services reachable from n through passable ones (n excluded)."""
        seen, todo, found = {n}, [n], set()
        while todo:
            for c in children[todo.pop()]:
                if c in seen or not passable(c):
                    continue
                seen.add(c)
                todo.append(c)
                if c in hot:
                    found.add(c)
        return found

    scores: dict[str, float] = {}
    evidence: dict[str, tuple[Evidence, ...]] = {}
    for n, path in reached.items():
        if n not in hot or below(n):
            continue
        scores[n] = hot[n]
        via = " → ".join(path)
        evidence[n] = (
            Evidence("traversal", f"where the anomaly stops, walking {via}: nothing "
                     f"{n} depends on looks anomalous", "graph", round(hot[n], 4),
                     f"path:{via}"),
        )  # fmt: skip
    if not scores and facts.anchor not in hot and not below(facts.anchor):
        return votes("traversal", {}, abstained="nothing reachable from the anchor is anomalous")
    return votes("traversal", scores, evidence)
