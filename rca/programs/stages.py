"""Stages of an investigation, each tried only when the one before was insufficient: its
leads were refuted (by the agent's tools, or by feedback saying wrong).

1. `select`: a shipped playbook picked from the alert's features (deterministic).
2. `compose`: a new program from the library's operators. With a model (`ModelComposer`)
   the model writes it, and the verifier's refusals go back to it for at most
   `REPAIRS` repairs; without one (or when it fails) a deterministic search over small
   compositions of the default program's scorers picks one (below).
3. `synthesis.synthesise` (model only): a new operator, admitted through the gate.

The deterministic search. A refuted attempt means the evidence it weighed pointed the wrong
way, so the next attempt should weigh the evidence differently, not only look further
down the same list: the candidates are the fusions of each data source alone, of all but
one source, and of each metrics view alone, over the scorers that voted on this incident.
The one whose own top 3 shares the fewest candidates with the refuted leads is taken
(ties: more voters, i.e. more evidence; then the name); the refuted leads are ranked last
(`fuse`'s `exclude`), so an escalated attempt never offers a lead again. The base fusion
itself (`every-source`: its next candidates) is a candidate too, and the only one when no
scorer voted (nothing moved: the priors order what is left).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from stackgraph.errors import InputError

from ..model import Alert
from ..scorers.change import CHANGE_TAU_S
from .engine import Engine
from .library import BUILTIN
from .operators import Operator
from .program import Binding, Program, parse, playbook, playbook_names
from .verifier import fusion_roles, verify

__all__ = [
    "ALERT_KINDS",
    "RECENT_RELEASE_S",
    "TOP",
    "Attempt",
    "compose",
    "compositions",
    "configured",
    "excluding",
    "select",
]

TOP = 3
"""Leads per attempt: the agent verifies the top three; Accuracy@3,i counts them."""
RECENT_RELEASE_S = CHANGE_TAU_S
"""A release this close before the alert window's end makes it an after-deploy alert: the
change scorer's own time constant."""
ALERT_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("saturation", re.compile(r"cpu|memory|\boom|throttl|saturat|resource|quota", re.I)),
    ("latency", re.compile(r"latenc|slow|duration|p9[059]|response.?time|timeout", re.I)),
    ("errors", re.compile(r"error|5xx|fail|exception|availab|unhealthy", re.I)),
)
"""Alert name, summary and description words → the playbook for that kind, first match."""

_RELEASES = Program(
    "releases",
    (
        Binding("window", "windows"),
        Binding("near", "khop", params={"hops": "auto"}),
        Binding("candidates", "callers", ("near",)),
        Binding("releases", "changes", ("candidates",)),
        Binding("facts", "merge", ("candidates", "window", "releases")),
        Binding("topology", "topology", ("facts",)),
        Binding("answer", "fuse", ("facts", "topology")),
    ),
    "the default program's neighbourhood and releases: what stage 1 looks at",
    "stage",
)


@dataclass(frozen=True)
class Attempt:
    """One stage's program and why it was chosen."""

    stage: int
    program: Program
    why: str


def configured(setting: str) -> Program | None:
    """The program `investigate_program` names: a playbook, a program file (verified), or
    None for `auto` (stage 1 picks one per alert). InputError naming the setting otherwise."""
    if setting == "auto":
        return None
    if setting in playbook_names():
        return playbook(setting)
    path = Path(setting)
    if not path.is_file():
        raise InputError(f"investigate_program {setting!r}: neither a playbook "
                         f"({', '.join(playbook_names())}), a program file, nor auto")  # fmt: skip
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"investigate_program {setting!r}: cannot read it: {exc}") from exc
    return verify(parse(text, origin="file"), BUILTIN)


def alert_text(alert: Alert) -> str:
    labels, notes = dict(alert.labels), dict(alert.annotations)
    return " ".join(
        str(x) for x in (labels.get("alertname", ""), notes.get("summary", ""),
                         notes.get("description", "")) if x
    )  # fmt: skip


def select(engine: Engine, alert: Alert) -> Attempt:
    """Stage 1: after-deploy when a candidate was released within RECENT_RELEASE_S before
    the alert window's end; else the first alert kind whose words the alert carries; else
    the default playbook. The neighbourhood and releases it reads are the default
    program's own (cached for the attempt that follows)."""
    run = engine.run(_RELEASES)
    win = run.windows
    if win is not None:
        recent = sorted({c.service for c in run.aggregate.changes
                         if win.end - RECENT_RELEASE_S <= c.at <= win.end})  # fmt: skip
        if recent:
            return Attempt(1, playbook("after-deploy"), f"released shortly before: {recent}")
    text = alert_text(alert)
    for kind, words in ALERT_KINDS:
        found = words.search(text)
        if found:
            return Attempt(1, playbook(kind), f"the alert says {found.group(0)!r}")
    return Attempt(1, playbook("default"), "no kind of alert recognised")


def _fusion(base: Program, name: str, voters: Sequence[str], priors: Sequence[str],
            refuted: Iterable[str]) -> Program:  # fmt: skip
    """`base` with its answer fusing only `voters` (and the priors), refuted leads last;
    bindings no longer consumed are dropped (the verifier refuses them)."""
    answer = base.answer
    args = (answer.args[0], *(a for a in answer.args[1:] if a in voters or a in priors))
    fused = Binding(answer.name, answer.op, args, {"exclude": sorted(set(refuted))})
    bindings = [*base.bindings[:-1], fused]
    needed = {fused.name}
    kept: list[Binding] = []
    for b in reversed(bindings):
        if b.name in needed:
            kept.append(b)
            needed.update(b.args)
    return Program(name, tuple(reversed(kept)), f"stage 2: {name}", "composed")


def compositions(base: Program, library: Mapping[str, Operator], voted: Iterable[str],
                 refuted: Iterable[str]) -> list[Program]:  # fmt: skip
    """The search space of the deterministic composer (module docstring), over the voters
    of `base` that voted on this incident (`voted`)."""
    sources, priors = fusion_roles(base, library)
    live = [v for v in sources if v in set(voted)]
    by_source: dict[str, list[str]] = {}
    for v in live:
        by_source.setdefault(sources[v], []).append(v)
    out: dict[tuple[str, ...], str] = {}
    for src, members in by_source.items():
        if len(by_source) == 1 and len(members) == 1:
            break  # one voter: its fusion alone is the base itself, below
        out.setdefault(tuple(members), f"{src}-only")
        rest = tuple(v for v in live if sources[v] != src)
        if rest:
            out.setdefault(rest, f"without-{src}")
        if len(members) > 1:
            for v in members:
                out.setdefault((v,), f"{v}-only")
    out.setdefault(tuple(live), "every-source")  # the base itself: its next candidates
    refuted = list(refuted)
    return [_fusion(base, name, voters, priors, refuted) for voters, name in out.items()]


def compose(
    engine: Engine,
    refuted: Iterable[str],
    tried: Iterable[Program] = (),
    base: Program | None = None,
) -> Attempt | None:
    """Stage 2 without a model: the deterministic search (module docstring); None when
    every composition was tried already."""
    base = base or playbook("default")
    refuted = set(refuted)
    done = {p.digest for p in tried}
    first = engine.run(base)
    voted = [n for n, s in first.answer.signals.items() if s.scores and not s.abstained]
    best: tuple[tuple[int, int, str], Program] | None = None
    for program in compositions(base, engine.library, voted, refuted):
        if program.digest in done:
            continue
        verify(program, engine.library)
        run = engine.run(_without_exclude(program))
        top = [c.service for c in run.answer.candidates[:TOP]]
        key = (len(refuted & set(top)), -(len(program.answer.args) - 1), program.name)
        if best is None or key < best[0]:
            best = (key, program)
    if best is None:
        return None
    (overlap, _, _), program = best
    return Attempt(2, program, f"{program.name}: {overlap} of its top {TOP} refuted before")


def _without_exclude(program: Program) -> Program:
    """The same fusion without `exclude`: what the composition itself ranks first."""
    answer = program.answer
    bare = Binding(answer.name, answer.op, answer.args)
    return Program(program.name, (*program.bindings[:-1], bare), program.description,
                   program.origin)  # fmt: skip


def excluding(program: Program, refuted: Iterable[str]) -> Program:
    """`program` with `refuted` leads ranked last (added to its fusion's `exclude`)."""
    answer = program.answer
    excluded = sorted(set(answer.params.get("exclude") or ()) | set(refuted))
    fused = Binding(answer.name, answer.op, answer.args, {**answer.params, "exclude": excluded})
    return Program(program.name, (*program.bindings[:-1], fused), program.description,
                   program.origin)  # fmt: skip
