"""The deterministic floor: with no model, or once the model is down, the plan's top
suspects get their suggested checks; a supported one with hard evidence is the conclusion."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from .alike import Calls, alike, no_calls
from .catalog import DEFAULT_SUGGESTED, floor_args, suggestion_problem
from .checks import run_check
from .evidence import Hypothesis
from .report import signature
from .sink import EvidenceSink
from .toolbox import Tool, ToolContext, recent
from .tools_graph import alert_query

KNOWLEDGE_EVENT = "knowledge: "
"""How a run's events name a knowledge item it used (trajectories collect them)."""


def knowledge_plan(ctx: ToolContext) -> tuple[list[str], set[str], list[str]]:
    """(checks first, in order; checks to skip; items used) for this alert's signature."""
    if ctx.knowledge is None or ctx.alert is None:
        return [], set(), []
    order, avoid, used = ctx.knowledge.tool_plan(signature(ctx.alert))
    return list(order), set(avoid), list(used)


def ordered(specs: Sequence[str], order: Sequence[str]) -> list[str]:
    """`specs` with those `order` names first, in its order (by tool or tool:arg)."""
    rank = {name: i for i, name in enumerate(order)}

    def key(spec: str) -> int:
        return min(rank.get(str(spec), len(rank)), rank.get(str(spec).partition(":")[0], len(rank)))

    return sorted(specs, key=key)


def released(ctx: ToolContext) -> set[str]:
    """The plan's candidates with a change in the window the change checks read (before
    the alert): what changed just before an incident is a lead whatever its rank, the
    first question of any runbook; its checks then support or refute it like any other."""
    if ctx.plan is None:
        return set()
    now = ctx.now()
    return {
        c.service
        for c in ctx.plan.candidates
        for e in c.evidence
        if e.signal == "change"
        and e.last_seen is not None
        and recent(e.last_seen, now, ctx.window_s)
    }


def run_floor(
    tools: dict[str, Tool],
    ctx: ToolContext,
    sink: EvidenceSink,
    deadline: float,
    events: list[str],
    top_k: int,
    clock: Callable[[], float],
) -> int:
    """Each top suspect's suggested checks, and those of every suspect that changed just
    before the alert (`released`), then, while no lead stands on its suspect seen failing,
    the next suspects' one at a time (`_while_unresolved`), then past incidents on the
    first, until the deadline; returns how many calls ran. With knowledge
    (`ctx.knowledge`), the checks a skeleton of this alert signature names run first, in
    its order, and those a `-` rule names are skipped; each item used is an event
    `knowledge: <id>`."""
    calls = 0
    leads = sink.ranked()
    changed = released(ctx)
    ranked = leads[:top_k] + [h for h in leads[top_k:] if h.suspect in changed]
    chosen = {h.suspect for h in ranked}
    rest = [h for h in leads if h.suspect not in chosen]
    order, avoid, used = knowledge_plan(ctx)
    events += [f"{KNOWLEDGE_EVENT}{i}" for i in used]
    for hyp in _while_unresolved(ranked, rest, sink, events):
        for spec in ordered(hyp.suggested_tools or DEFAULT_SUGGESTED, order):
            if str(spec) in avoid or str(spec).partition(":")[0] in avoid:
                events.append(f"floor skipped {spec} on {hyp.suspect}: an anti-pattern here")
                continue
            if clock() > deadline:
                return calls
            name, _, arg = str(spec).partition(":")
            problem = suggestion_problem(tools, str(spec), hyp.suspect)
            if problem:
                events.append(f"floor skipped {problem}")
                continue
            tool = tools[name]
            if not tool.status(ctx).enabled:
                continue
            for args in floor_args(name, arg, hyp.suspect):
                run_check(tool, args, ctx, sink)
                calls += 1
            if name == "git_log" and "git_show" in tools:
                sha = _recent_commit(hyp)
                if sha:
                    show = {"service": hyp.suspect, "sha": sha}
                    run_check(tools["git_show"], show, ctx, sink)
                    calls += 1
    if ranked and ctx.memory is not None and "memory_lookup" in tools:
        if clock() > deadline:
            return calls
        # Past incidents as tool evidence without a model: was the top suspect the
        # root cause of incidents like this one?
        ask = {"query": alert_query(ctx), "service": ranked[0].suspect}
        run_check(tools["memory_lookup"], ask, ctx, sink)
        calls += 1
    return calls


def _while_unresolved(first: list[Hypothesis], rest: list[Hypothesis], sink: EvidenceSink,
                      events: list[str]) -> Iterator[Hypothesis]:  # fmt: skip
    """The top leads, then the plan's next ones, one at a time, while no lead stands on its
    suspect seen failing: checking three leads and finding none is no ground to stop
    looking, and a lead that stands on a change alone (it changed, nothing shows it
    failing) is the runbook's first question, not its answer."""
    yield from first
    for hyp in rest:
        if _answered(sink):
            return
        events.append(f"floor: no lead stands on a fault seen, checking {hyp.suspect} "
                      f"(plan rank {hyp.rank})")  # fmt: skip
        yield hyp


def _answered(sink: EvidenceSink) -> bool:
    best = floor_conclusion(sink)
    return best is not None and sink.hypotheses[best].seen_failing


def floor_conclusion(sink: EvidenceSink, calls: Calls = no_calls) -> str | None:
    """The best concludable lead; of leads the evidence weighs alike, one no callee among
    them explains (`alike`)."""
    best = next((h for h in sink.ranked() if sink.concludable(h)), None)
    if best is None:
        return None
    tied, explained = alike(sink, best, calls)
    return next((h.suspect for h in tied if h.suspect not in explained), best.suspect)


def _recent_commit(h: Hypothesis) -> str | None:
    for ev in reversed(h.evidence):
        if ev.tool == "git_log" and ev.data.get("recent"):
            return str(ev.data["recent"][0]["sha"])
    return None
