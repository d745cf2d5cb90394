"""The fusion's last step and what a plan says beside each candidate: the fused order with
every vote in its breakdown (`combine`), how to check a candidate (`suggested_tools`), and
why a scorer judged nothing (`abstentions`). Programs (`rca.programs`) call `combine`
through their `fuse` operator; the default program is the read path's playbook.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .facts import Facts
from .fusion import by_source, rrf
from .model import Candidate, Evidence
from .scorers import Signal, all_nodes


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


def combine(
    facts: Facts,
    signals: Mapping[str, Signal],
    voters: Sequence[str],
    sources: Mapping[str, str],
    priors: Sequence[str],
) -> list[Candidate]:
    """Pure: the fused ranking, each candidate with every signal's vote in its breakdown
    (keyed as `signals` is), its evidence and how to check it. `voters` are fused by data
    source (`sources`); ties are broken as `ranked` says."""
    nodes = all_nodes(facts)
    fused = by_source(signals, voters, sources, nodes)
    views = rrf(signals, voters, nodes)
    out: list[Candidate] = []
    for name, node in nodes.items():
        breakdown = {
            s: round(float(sig.scores.get(name, 0.0)), 4)
            for s, sig in signals.items()
            if s in priors or name in sig.scores
        }
        evidence: list[Evidence] = []
        for sig in signals.values():
            evidence.extend(sig.evidence.get(name, ()))
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
    order = ranked(list(nodes), fused, views, [signals[p].scores for p in priors], facts.anchor)
    at = {name: i for i, name in enumerate(order)}
    out.sort(key=lambda c: at[c.service])
    return out


def ranked(
    names: Sequence[str],
    fused: Mapping[str, float],
    views: Mapping[str, float],
    priors: Sequence[Mapping[str, float]],
    anchor: str | None = None,
) -> list[str]:
    """The plan's order: fused score, then how many views agree (flat RRF), then the
    alerting service, then each prior in turn, then the name. Among candidates no evidence
    tells apart (nothing voted for any of them), the anchor is the one the alert itself saw
    misbehave; the others' faults are unobserved, and the priors only guess at them."""
    return sorted(names, key=lambda n: (-fused.get(n, 0.0), -views.get(n, 0.0), n != anchor,
                                        *(-p.get(n, 0.0) for p in priors), n))  # fmt: skip


def abstentions(signals: Mapping[str, Signal]) -> tuple[str, ...]:
    """One note per scorer that judged nothing, saying why."""
    return tuple(f"{n} abstained: {s.abstained}" for n, s in signals.items() if s.abstained)
