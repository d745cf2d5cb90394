"""Traversal from the symptom: walk the call graph callee-wards from the alerting service
along the calls that moved (their own series left their band: `telemetry.edge_moves`), and
vote for where the walk stops: services the calls into which moved more than any call they
make, the frontier where the anomaly starts (scored by its own part, as `telemetry` scores
it: `telemetry.own_part`). The alerting service itself is the frontier when calls into
it moved more than any of its own.

Without edge series (nothing probed per edge) the walk follows the services the anomaly
scorer found out of band instead, each scored by its own anomaly beyond what its
dependencies pass up to it: their latency and errors, the kinds the edge walk follows (a
callee's CPU or memory is spent by it, not by its callers). Abstains when nothing moved;
has no say on a service no walk can reach (`neighbourhood.unlinked`).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Mapping

from ..facts import Facts
from ..model import Evidence
from ..series import assess
from .signal import Signal, all_nodes, votes
from .telemetry import CALL_KINDS, EdgeMove, edge_moves, own_part


def traversal(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    """Vote for the frontier of what moved, reached from the symptom."""
    nodes = all_nodes(facts)
    moved = {k: v for k, v in edge_moves(facts).items() if v.effect > 0 and k[1] in nodes}
    anomaly = prior.get("anomaly")
    hot = dict(anomaly.scores) if anomaly else {}
    children: dict[str, set[str]] = defaultdict(set)
    strength: dict[str, EdgeMove] = {}
    calls: dict[str, float] = {}
    if moved:
        for (src, dst), v in moved.items():  # calls from `user` move the anchor itself
            if src in nodes:
                children[src].add(dst)
            if dst not in strength or v.effect > strength[dst].effect:
                strength[dst] = v
        via_edges = True
    elif hot:
        for e in facts.edges:
            if e.src != e.dst and e.dst in hot and e.dst in nodes:
                children[e.src].add(e.dst)
        strength = {n: EdgeMove(v) for n, v in hot.items()}
        via_edges = False
        calls = _call_kinds(facts)  # what a callee passes up is what the edge walk follows
    else:
        return votes("traversal", {}, abstained="no call and no service around it moved")
    reached: dict[str, tuple[str, ...]] = {facts.anchor: (facts.anchor,)}
    queue = deque([facts.anchor])
    while queue:
        n = queue.popleft()
        for c in sorted(children[n]):
            if c not in reached:
                reached[c] = (*reached[n], c)
                queue.append(c)
    scores: dict[str, float] = {}
    evidence: dict[str, tuple[Evidence, ...]] = {}
    for n, path in reached.items():
        below = [strength[c] if via_edges else EdgeMove(calls.get(c, 0.0)) for c in children[n]]
        part = own_part(strength[n], below) if n in strength else 0.0
        if part <= 0:
            continue
        scores[n] = part
        via = " → ".join(path)
        what = "calls" if via_edges else "services"
        evidence[n] = (
            Evidence("traversal", f"where the {what} that moved stop, walking {via}",
                     "graph", round(strength[n].effect, 4), f"path:{via}"),
        )  # fmt: skip
    if not scores:
        return votes("traversal", {}, abstained="nothing that moved is reached from the anchor")
    if via_edges:
        covered = {dst for _, dst in edge_moves(facts)} | {facts.anchor}
    else:  # no walk reaches an unlinked service: no say on it
        covered = {n for n, p in facts.probes.items()
                   if p and (n not in nodes or nodes[n].position != "unlinked")}  # fmt: skip
    return votes("traversal", scores, evidence, covered=covered)


def _call_kinds(facts: Facts) -> dict[str, float]:
    """Per service, its largest out-of-band effect among the kinds calls carry to callers."""
    window = facts.windows.alert if facts.windows else None
    return {
        name: max(effects)
        for name, series in facts.probes.items()
        if (effects := [assess(s, window).effect for s in series if s.kind in CALL_KINDS])
    }
