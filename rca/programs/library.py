"""The built-in operator library: today's read path, part by part.

    windows                                         -> Window
    anchor, khop, callers, unlinked(CandidateSet)   -> CandidateSet
    probes, log_lines, spans(CandidateSet, Window)  -> Telemetry
    changes, past_incidents(CandidateSet)           -> Telemetry
    merge(CandidateSet, Window, Telemetry...)       -> Aggregate
    <scorer>(Aggregate[, ScoredCandidates...])      -> ScoredCandidates
    fuse(Aggregate, ScoredCandidates...)            -> RankedAnswer

Generators are `rca.collect.GENERATORS`, scorers `rca.scorers`, the fusion
`rca.pipeline.combine`: an operator only adapts their calling convention, so a program of
these parts ranks exactly as the parts do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from ..collect import GENERATORS
from ..facts import Facts
from ..pipeline import combine
from ..scorers import (
    Scorer,
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
from ..windows import ALERT_LEAD_S, ALERT_SPAN_S, BASELINE_SPAN_S, Windows, windows_for
from .operators import Call, Operator, Param
from .types import (
    AGGREGATE,
    ANSWER,
    AUTO,
    CANDIDATES,
    NUMBER,
    SCORED,
    SET,
    TELEMETRY,
    WINDOW,
    Answer,
    Scored,
)

__all__ = ["BUILTIN", "scorer"]


def _windows(call: Call) -> Windows:
    p = call.params
    win = windows_for(call.ctx.alert, call.ctx.at, lead_s=p["lead_s"], span_s=p["span_s"],
                      baseline_s=p["baseline_s"], baseline=call.ctx.baseline)  # fmt: skip
    back = p["baseline_end"]
    if back == AUTO or call.ctx.baseline is not None or not back:
        return win
    b0, b1 = win.baseline
    return Windows(win.alert, (b0 - float(back), b1 - float(back)))


def _start(call: Call) -> Facts:
    anchor = call.ctx.anchor
    return Facts(anchor.name, {anchor.name: anchor}, windows=call.ctx.request.windows)


def _khop(call: Call) -> Facts:
    req = call.ctx.request
    hops = call.params["hops"]
    if hops != AUTO and int(hops) != req.hops:
        req = replace(req, hops=int(hops))
    return GENERATORS["khop"](call.ctx.store, req, _start(call))


def _grow(name: str, windowed: bool) -> Any:
    """A generator on the candidate set (and the window, for the read-time sources)."""

    def run(call: Call) -> Facts:
        req = call.ctx.request
        if windowed:
            req = replace(req, windows=call.args[1])
        return GENERATORS[name](call.ctx.store, req, call.facts(0))

    return run


_MODALITIES = ("changes", "history", "probes", "probe_source", "logs", "traces")


def _merge(call: Call) -> Facts:
    """The candidate set with each telemetry's own part laid over it, in argument order;
    notes in the same order, as the generators would have added them one after another."""
    base = call.facts(0)
    window = call.args[1]
    notes = list(base.notes)
    fields: dict[str, Any] = {}
    for i in range(2, len(call.args)):
        t = call.facts(i)
        notes += t.notes[len(base.notes) :] if t.notes[: len(base.notes)] == base.notes else t.notes
        for name in _MODALITIES:
            value = getattr(t, name)
            if value != getattr(base, name):
                fields[name] = value
    merged = replace(base, windows=window, notes=tuple(notes), **fields)
    return _muted(merged, set(call.params.get("mute") or ()))


def _muted(facts: Facts, mute: set[str]) -> Facts:
    """The facts without the series in `mute` (`service/kind/name`, as the evidence refers
    to them): series this platform's feedback showed to move without being the cause
    (knowledge a gate admitted), judged by no scorer. The plan's notes say which."""
    if not mute:
        return facts
    dropped = sorted(mute & {f"{n}/{p.ref}" for n, ps in facts.probes.items() for p in ps})
    if not dropped:
        return facts
    probes = {n: tuple(p for p in ps if f"{n}/{p.ref}" not in mute)
              for n, ps in facts.probes.items()}  # fmt: skip
    note = f"not judged, by this platform's knowledge: {', '.join(dropped)}"
    return replace(facts, probes=probes, notes=(*facts.notes, note))


def scorer(fn: Scorer, roles: tuple[str, ...] = ()) -> Any:
    """A scorer's operator body: the aggregate, and the scored arguments under the names
    the scorer reads them by (`roles`)."""

    def run(call: Call) -> Any:
        prior = {role: a.signal for role, a in zip(roles, call.args[1:], strict=False)}
        return fn(call.facts(0), prior)

    return run


def _kinds(fn: Scorer) -> Any:
    """A scorer restricted to some kinds of series (`kinds`; empty: every kind)."""

    def run(call: Call) -> Any:
        facts = call.facts(0)
        kinds = set(call.params.get("kinds") or ())
        if kinds:
            probes = {n: tuple(p for p in ps if p.kind in kinds) for n, ps in facts.probes.items()}
            facts = replace(facts, probes=probes)
        return fn(facts, {})

    return run


def _fuse(call: Call) -> Answer:
    """RRF within each data source, pooled across them (`rca.pipeline.combine`); candidates
    named in `exclude` (leads an earlier attempt had refuted) go last, in their order."""
    facts = call.facts(0)
    scored: dict[str, Scored] = dict(zip(call.names[1:], call.args[1:], strict=True))
    signals = {name: s.signal for name, s in scored.items()}
    priors = tuple(n for n, s in scored.items() if s.prior)
    sources = {n: s.source or n for n, s in scored.items() if not s.prior}
    ranked = combine(facts, signals, tuple(sources), sources, priors)
    refuted = set(call.params.get("exclude") or ())
    if refuted:
        ranked = [c for c in ranked if c.service not in refuted] + [
            c for c in ranked if c.service in refuted
        ]
    return Answer(ranked, signals, sources, priors)


_MUTE = Param(SET, [], "series (service/kind/name) no scorer judges: ones this platform's "
              "feedback showed to move without being the cause")  # fmt: skip
_HOPS = Param(NUMBER, AUTO, "hops downstream (clamped 1..4)",
              auto="the deployment's investigate_hops, or the caller's")  # fmt: skip
_KINDS = Param(SET, [], "series kinds judged (latency, errors, cpu, memory, workload, "
               "network, other); empty: every kind")  # fmt: skip


def _scorer_op(name: str, fn: Scorer, doc: str, source: str | None = None,
               prior: bool = False, roles: tuple[str, ...] = ()) -> Operator:  # fmt: skip
    return Operator(name, (AGGREGATE, *([SCORED] * len(roles))), SCORED, scorer(fn, roles),
                    doc, source=source, prior=prior, roles=roles)  # fmt: skip


_OPS = [
    Operator(
        "windows",
        (),
        WINDOW,
        _windows,
        "the alert window and the baseline before it",
        params={
            "lead_s": Param(
                NUMBER, ALERT_LEAD_S, "the alert window starts this long before the alert fired"
            ),
            "span_s": Param(
                NUMBER,
                ALERT_SPAN_S,
                "the alert window's length when the alert gives no firing time",
            ),
            "baseline_s": Param(NUMBER, BASELINE_SPAN_S, "the baseline's length"),
            "baseline_end": Param(
                NUMBER,
                AUTO,
                "seconds between the baseline's end and the alert window's start",
                auto="0, or back to the anchor's last recorded data "
                "when no candidate has data in that baseline",
            ),
        },
    ),
    Operator("anchor", (), CANDIDATES, _start, "the alerting service alone"),
    Operator(
        "khop",
        (),
        CANDIDATES,
        _khop,
        "the anchor's downstream neighbourhood",
        params={"hops": _HOPS},
    ),
    Operator(
        "callers",
        (CANDIDATES,),
        CANDIDATES,
        _grow("callers", False),
        "adds the anchor's direct callers",
    ),
    Operator(
        "unlinked",
        (CANDIDATES,),
        CANDIDATES,
        _grow("unlinked", False),
        "the anchor's namespace, where the graph links the anchor to nothing",
    ),
    Operator(
        "probes",
        (CANDIDATES, WINDOW),
        TELEMETRY,
        _grow("probes", True),
        "each candidate's metric series in both windows (the metrics source)",
    ),
    Operator(
        "log_lines",
        (CANDIDATES, WINDOW),
        TELEMETRY,
        _grow("logs", True),
        "each candidate's log lines in both windows (Loki or files)",
    ),
    Operator(
        "spans",
        (CANDIDATES, WINDOW),
        TELEMETRY,
        _grow("traces", True),
        "the spans around the candidates in both windows",
    ),
    Operator(
        "changes",
        (CANDIDATES,),
        TELEMETRY,
        _grow("changes", False),
        "deploys and changes of the candidates",
    ),
    Operator(
        "past_incidents",
        (CANDIDATES,),
        TELEMETRY,
        _grow("history", False),
        "validated past root causes among the candidates",
    ),
    Operator(
        "merge",
        (CANDIDATES, WINDOW, TELEMETRY),
        AGGREGATE,
        _merge,
        "the candidates with all their telemetry",
        params={"mute": _MUTE},
        variadic=True,
    ),
    _scorer_op("topology", topology, "criticality, fan-in and position", prior=True),
    _scorer_op("centrality", centrality, "PageRank on the window's call graph", prior=True),
    _scorer_op("telemetry", telemetry, "frontier rule on call edges", "metrics"),
    _scorer_op("anomaly", anomaly, "largest move of a candidate's own series", "metrics"),
    Operator(
        "anomaly_of",
        (AGGREGATE,),
        SCORED,
        _kinds(anomaly),
        "anomaly on some kinds of series only",
        params={"kinds": _KINDS},
        source="metrics",
    ),
    _scorer_op("change", change, "deploys and changes timed against the anomaly", "changes"),
    _scorer_op(
        "history",
        history,
        "validated past root causes: how often a service was the cause here, a base rate, "
        "not evidence about this alert, so it breaks ties",
        prior=True,
    ),
    _scorer_op(
        "blame",
        blame,
        "personalised PageRank from the symptom: the votes it reads spread over the call "
        "graph, so its own part is structure, which breaks ties",
        prior=True,
        roles=("anomaly", "telemetry"),
    ),
    _scorer_op(
        "traversal",
        traversal,
        "the frontier of what moved, from the symptom",
        "metrics",
        roles=("anomaly",),
    ),
    _scorer_op("onset", onset, "which candidate's series left their band first", "metrics"),
    _scorer_op("logs", logs, "bursts of error lines and new templates", "logs"),
    _scorer_op("failed_calls", failed_calls, "calls failed by their spans' error lines", "traces"),
    _scorer_op("instability", instability, "rise of p99/p50 of a service's spans", "traces"),
    _scorer_op("self_time", self_time, "rise of a service's own time per call", "traces"),
    Operator(
        "fuse",
        (AGGREGATE, SCORED),
        ANSWER,
        _fuse,
        "reciprocal rank fusion within each source, pooled across them; priors break ties",
        params={"exclude": Param(SET, [], "candidates ranked last: leads already refuted")},
        variadic=True,
    ),
]

BUILTIN: Mapping[str, Operator] = MappingProxyType({op.name: op for op in _OPS})
