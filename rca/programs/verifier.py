"""The verifier: a program runs only after it passes every rule, and a refusal names the
binding and the rule it broke.

| rule | refused |
|---|---|
| `operator` | an operator the library does not have |
| `params` | an unknown parameter, or a value its type (or `auto`) does not allow |
| `bound-twice` | a name bound twice |
| `unbound` | an argument used before it is bound (or never bound) |
| `types` | arguments whose types do not fit the operator's signature |
| `unused` | a binding no one consumes (the answer aside) |
| `unscored` | a candidate set from which no scorer is reached |
| `one-answer` | anything but exactly one RankedAnswer, as the last binding |
| `size` | more than MAX_NODES bindings |
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from .operators import Operator
from .program import Program, ProgramError
from .types import ANSWER, CANDIDATES, SCORED

__all__ = ["MAX_NODES", "fusion_roles", "problems", "verify"]

MAX_NODES = 40


def problems(program: Program, library: Mapping[str, Operator]) -> list[str]:
    """Every rule the program breaks, as `binding 'x': rule: what` (empty: it verifies)."""
    out: list[str] = []
    if len(program.bindings) > MAX_NODES:
        out.append(f"program: size: {len(program.bindings)} bindings, at most {MAX_NODES}")
    types: dict[str, str] = {}
    consumers: dict[str, list[str]] = defaultdict(list)
    for b in program.bindings:
        where = f"binding {b.name!r}"
        if b.name in types:
            out.append(f"{where}: bound-twice: {b.name!r} is already bound")
        op = library.get(b.op)
        if op is None:
            out.append(f"{where}: operator: unknown operator {b.op!r}")
        missing = [a for a in b.args if a not in types]
        for a in missing:
            out.append(f"{where}: unbound: {a!r} is used before it is bound")
        for a in b.args:
            consumers[a].append(b.name)
        if op is None:
            types.setdefault(b.name, "?")
            continue
        for key, value in b.params.items():
            spec = op.params.get(key)
            if spec is None:
                known = ", ".join(op.params) or "none"
                out.append(f"{where}: params: {b.op} has no parameter {key!r} (known: {known})")
            elif not spec.accepts(value):
                allowed = f"{spec.type}" + (" or auto" if spec.auto else "")
                out.append(f"{where}: params: {key}={value!r} is not a {allowed}")
        if not missing:
            wrong = op.accepts([types[a] for a in b.args])
            if wrong:
                out.append(f"{where}: types: {wrong} ({op.signature()})")
        types.setdefault(b.name, op.output)
    answers = [b.name for b in program.bindings if types.get(b.name) == ANSWER]
    last = program.bindings[-1].name if program.bindings else None
    if len(answers) != 1 or answers[0] != last:
        out.append(
            f"program: one-answer: exactly one {ANSWER} is allowed and it must be the last "
            f"binding (found {len(answers)}: {answers})"
        )
    for b in program.bindings:
        if b.name != last and not consumers.get(b.name):
            out.append(f"binding {b.name!r}: unused: no binding consumes it")
    for b in program.bindings:
        if types.get(b.name) == CANDIDATES and not _reaches_scorer(b.name, consumers, types):
            out.append(f"binding {b.name!r}: unscored: no scorer judges this candidate set")
    return out


def _reaches_scorer(
    name: str, consumers: Mapping[str, list[str]], types: Mapping[str, str]
) -> bool:
    seen: set[str] = set()
    stack = [name]
    while stack:
        n = stack.pop()
        for c in consumers.get(n, ()):
            if types.get(c) == SCORED:
                return True
            if c not in seen:
                seen.add(c)
                stack.append(c)
    return False


def verify(program: Program, library: Mapping[str, Operator]) -> Program:
    """The program, verified; ProgramError with every broken rule otherwise."""
    found = problems(program, library)
    if found:
        raise ProgramError(program.name, found)
    return program


def fusion_roles(
    program: Program, library: Mapping[str, Operator]
) -> tuple[dict[str, str], list[str]]:
    """What the answer's fusion does with each scored argument, read off the program:
    voting binding → its data source, and the priors in order."""
    ops = {b.name: library[b.op] for b in program.bindings if b.op in library}
    sources: dict[str, str] = {}
    priors: list[str] = []
    for arg in program.answer.args[1:]:
        op = ops.get(arg)
        if op is None:
            continue
        if op.prior:
            priors.append(arg)
        else:
            sources[arg] = op.source or arg
    return sources, priors
