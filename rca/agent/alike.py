"""Leads the evidence weighs alike (the same state and confidence), which of them a callee
among them explains, and what is left to choose between: the conclusion's rivals.

A callee's fault shows in its callers' calls (the read path's frontier), so of leads weighed
alike, one whose support is all errors or latency, what calls carry, is explained by a lead
it calls that shows errors or latency of its own. A caller's own change or resource rise is
no symptom a callee explains, and a callee that only changed or only used more cpu shows
none to explain with. What no callee explains stays a rival: the evidence does not tell the
conclusion from it, so what chose between them was the plan's rank, the world-model's
prior, and the graph proposes, tools verify (`evidence`). A conclusion with a rival is not
Validated, however many lines stand for it (`conclusion_state`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import cache

from .downstream import callees
from .evidence import (
    HEALTH,
    METRICS,
    Hypothesis,
    HypothesisState,
    ToolEvidence,
    Verdict,
    is_a_line,
    source_of,
)
from .sink import EvidenceSink
from .toolbox import ToolContext

Calls = Callable[[str], Collection[str]]
"""service -> the services it calls."""


def no_calls(_: str) -> Collection[str]:
    """Without the graph, no lead is known to call another: none explains another."""
    return ()


def graph_calls(ctx: ToolContext) -> Calls:
    """The services each one calls, by the graph (`downstream.callees`), all of them (only
    names are compared: no bound on reads applies), read once per service: the audit
    re-concludes after every patch it tries."""
    return cache(lambda service: callees(ctx.store, service, None))


def alike(sink: EvidenceSink, lead: Hypothesis, calls: Calls) -> tuple[list[Hypothesis], set[str]]:
    """The concludable leads weighed as `lead` is, in the sink's order, and those of them a
    lead among them that they call explains."""
    weight = (lead.state, lead.confidence)
    tied = [h for h in sink.ranked() if (h.state, h.confidence) == weight and sink.concludable(h)]
    carried = {h.suspect: [_carried(e) for e in _support(h)] for h in tied}
    showing = {who for who, kinds in carried.items() if any(kinds)}
    explained = {
        who
        for who, kinds in carried.items()
        if kinds and all(kinds) and (others := showing - {who}) and others & set(calls(who))
    }
    return tied, explained


def rivals(sink: EvidenceSink, conclusion: str | None, calls: Calls) -> list[str]:
    """The leads weighed as the conclusion is that no callee among them explains."""
    hyp = sink.hypotheses.get(conclusion) if conclusion else None
    if hyp is None:
        return []
    tied, explained = alike(sink, hyp, calls)
    return [h.suspect for h in tied if h.suspect != conclusion and h.suspect not in explained]


def conclusion_state(hyp: Hypothesis, rivals_: Collection[str]) -> HypothesisState:
    """The conclusion's state: its evidence's, except that a rival keeps it from Validated."""
    if hyp.state == HypothesisState.VALIDATED and rivals_:
        return HypothesisState.SUPPORTED
    return hyp.state


def _support(h: Hypothesis) -> list[ToolEvidence]:
    return [e for e in h.evidence if e.verdict == Verdict.SUPPORTS and is_a_line(e.tool)]


def _carried(e: ToolEvidence) -> bool:
    """A symptom calls carry to the callers: errors or latency, measured or logged."""
    src = source_of(e.tool)
    return src == "logs" or (src == METRICS and e.check in HEALTH)
