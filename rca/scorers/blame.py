"""Blame propagation: personalised PageRank from the symptom over the dependency graph.

A walker starts at the alerting service and moves from caller to callee in proportion to
how anomalous the callee looks (its own metrics, the errors on the edge into it), so blame
flows down the call graph towards whatever is broken. Each node also keeps a self-loop
worth the part of its anomaly its callees do not explain (max(0, e_self - max e_callee)):
the walker lingers where the anomaly *starts*, not where it is merely passed on. A weak
backward edge lets blame reach callers of the anchor. Stale edges carry half the weight.

It scores the candidates that hold more of the walk than an indifferent one would give
them (1/n of it), and abstains when nothing around the anchor looks anomalous. The default
program reads it as a prior, not a vote: the anomaly it walks on is already the metrics'
vote, and what it adds is the call graph's structure, which only breaks ties (a walk
collects at much-called services whatever the evidence).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp

from ..facts import Facts
from ..model import Evidence
from .signal import STALE_FACTOR, Signal, all_nodes, votes

DAMPING = 0.85
BACKWARD = 0.2
LOOKAHEAD = 0.8
"""A callee looks as suspicious as the worst thing behind it, discounted per hop, so blame
can cross a hop whose own metrics are quiet (a thin proxy, an unmonitored service)."""
EPSILON = 0.01
"""A floor on evidence so a healthy graph still has a defined walk."""
_ITERATIONS = 100


def node_evidence(facts: Facts, prior: Mapping[str, Signal]) -> dict[str, float]:
    """How anomalous each node looks on its own: the stronger of its probes and its edges."""
    anomaly = prior.get("anomaly")
    telemetry = prior.get("telemetry")
    out: dict[str, float] = {}
    for name in all_nodes(facts):
        a = anomaly.scores.get(name, 0.0) if anomaly else 0.0
        t = telemetry.scores.get(name, 0.0) if telemetry else 0.0
        out[name] = max(a, t)
    return out


def personalised_pagerank(
    names: list[str],
    edges: list[tuple[int, int, float]],
    seed: int | None,
    damping: float = DAMPING,
    iterations: int = _ITERATIONS,
) -> np.ndarray:
    """Stationary distribution of a walk restarting at `seed` (None: anywhere, i.e. plain
    PageRank); dangling mass returns there."""
    n = len(names)
    if n == 0:
        return np.zeros(0)
    rows = [i for i, _, _ in edges]
    cols = [j for _, j, _ in edges]
    vals = [w for _, _, w in edges]
    w = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    out = np.asarray(w.sum(axis=1)).ravel()
    inv = sp.diags(np.divide(1.0, out, out=np.zeros(n), where=out > 0))
    trans = (inv @ w).T.tocsr()
    teleport = np.full(n, 1.0 / n) if seed is None else np.zeros(n)
    if seed is not None:
        teleport[seed] = 1.0
    dangling = out <= 0
    pr = teleport.copy()
    for _ in range(iterations):
        new = damping * (trans @ pr + pr[dangling].sum() * teleport) + (1 - damping) * teleport
        if np.abs(new - pr).sum() < 1e-10:
            pr = new
            break
        pr = new
    return np.asarray(pr)


def blame(facts: Facts, prior: Mapping[str, Signal]) -> Signal:
    """Vote: the PageRank share of each candidate holding more than 1/n of the walk (minus
    the restart mass at the anchor), scaled so the top one gets the strongest evidence."""
    nodes = sorted(all_nodes(facts))
    idx = {n: i for i, n in enumerate(nodes)}
    ev = node_evidence(facts, prior)
    strongest = max(ev.values(), default=0.0)
    if strongest <= 0:
        return votes("blame", {}, abstained="nothing around the anchor looks anomalous")
    e = {n: ev.get(n, 0.0) + EPSILON for n in nodes}
    children: dict[str, list[str]] = {n: [] for n in nodes}
    deps = [d for d in facts.edges if d.src in idx and d.dst in idx and d.src != d.dst]
    for d in deps:
        children[d.src].append(d.dst)
    reach = dict(e)
    for _ in range(len(nodes)):
        changed = False
        for n in nodes:
            best = max((LOOKAHEAD * reach[c] for c in children[n]), default=0.0)
            if best > reach[n] + 1e-12:
                reach[n], changed = best, True
        if not changed:
            break
    weighted: list[tuple[int, int, float]] = []
    for d in deps:
        f = STALE_FACTOR if d.stale else 1.0
        weighted.append((idx[d.src], idx[d.dst], reach[d.dst] * f))
        weighted.append((idx[d.dst], idx[d.src], BACKWARD * e[d.src] * f))
    for n in nodes:
        own = e[n] - max((reach[c] for c in children[n]), default=0.0)
        if own > 0:
            weighted.append((idx[n], idx[n], own))
    pr = personalised_pagerank(nodes, weighted, idx[facts.anchor])
    pr[idx[facts.anchor]] = max(0.0, pr[idx[facts.anchor]] - (1 - DAMPING))
    total = float(pr.sum())
    top = float(pr.max())
    scores: dict[str, float] = {}
    evidence: dict[str, tuple[Evidence, ...]] = {}
    for n in nodes:
        share = float(pr[idx[n]]) / total if total > 0 else 0.0
        if share <= 1.0 / len(nodes):
            continue
        scores[n] = float(pr[idx[n]]) / top * strongest
        evidence[n] = (
            Evidence("blame", f"{100 * share:.1f}% of the blame walked from {facts.anchor} "
                     f"(own anomaly {ev.get(n, 0.0):.2f})", "pagerank", round(scores[n], 4),
                     f"ppr:{facts.anchor}->{n}"),
        )  # fmt: skip
    return votes("blame", scores, evidence)
