"""The admission gate for a synthesised operator: Python a model wrote, checked on its AST
before it is ever run, and compiled into a scorer with a declared signature.

    def score(facts, params):          # exactly this signature
        ...                            # returns {service: score}; higher is more suspect

| refused | why |
|---|---|
| a syntax error, another signature, more than the one function | the contract |
| imports outside ALLOWED_IMPORTS | no network, files or processes |
| FORBIDDEN_NAMES (open, eval, exec, compile, __import__, getattr, ...) | I/O, dynamic code |
| any attribute or name starting with `_` | attribute tricks (`__class__`, `__subclasses__`) |
| `while`, nested functions or classes, `global`, a call of `score` itself | bounded work |
| a number other than 0, 1, 2, -1 (thresholds come from `params`) | thresholds are parameters |

`facts` is plain data (`facts_view`): candidates, each one's series (baseline and alert
values), call edges, log line counts, releases and the windows; no object with methods.
The compiled function runs with a reduced set of builtins and an import that only knows
ALLOWED_IMPORTS.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..facts import Facts
from ..scorers import Signal, votes
from ..scorers.logs import ERROR_LEVELS
from .operators import Call, Operator, Param
from .types import AGGREGATE, NUMBER, SCORED

__all__ = ["ALLOWED_IMPORTS", "FORBIDDEN_NAMES", "GateError", "compile_operator", "facts_view"]

ALLOWED_IMPORTS = frozenset({"math", "statistics", "collections", "itertools"})
FORBIDDEN_NAMES = frozenset({
    "open", "eval", "exec", "compile", "__import__", "input", "print", "globals", "locals",
    "vars", "getattr", "setattr", "delattr", "hasattr", "breakpoint", "exit", "quit", "help",
    "memoryview", "type", "object", "super", "classmethod", "staticmethod", "property", "dir",
    "id", "os", "sys", "subprocess", "socket", "importlib", "builtins", "file",
})  # fmt: skip
SMALL_NUMBERS = frozenset({0, 1, 2, -1})
_SAFE_BUILTINS = ("abs", "all", "any", "bool", "dict", "enumerate", "float", "int", "len",
                  "list", "max", "min", "range", "reversed", "round", "set", "sorted", "str",
                  "sum", "tuple", "zip", "isinstance", "map", "filter")  # fmt: skip
FUNCTION = "score"


class GateError(ValueError):
    """Refused by the gate; `reasons` say which rule, where (line)."""

    def __init__(self, reasons: list[str]) -> None:
        self.reasons = reasons
        super().__init__("; ".join(reasons))


def _check(tree: ast.Module) -> list[str]:
    out: list[str] = []
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    others = [
        n for n in tree.body if not isinstance(n, ast.FunctionDef | ast.Import | ast.ImportFrom)
    ]
    if len(funcs) != 1 or funcs[0].name != FUNCTION or others:
        out.append(
            f"signature: exactly one top-level `def {FUNCTION}(facts, params)` (and imports)"
        )
    for f in funcs:
        a = f.args
        names = [x.arg for x in a.args]
        if (names != ["facts", "params"] or a.vararg or a.kwarg or a.kwonlyargs or a.defaults
                or a.posonlyargs or f.decorator_list):  # fmt: skip
            out.append(f"line {f.lineno}: signature: `def {FUNCTION}(facts, params)`, nothing else")
    for node in ast.walk(tree):
        line = getattr(node, "lineno", "?")
        if isinstance(node, ast.Import | ast.ImportFrom):
            mods = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            bad = [m for m in mods if m.split(".")[0] not in ALLOWED_IMPORTS]
            if bad:
                out.append(f"line {line}: import: {bad} not in {sorted(ALLOWED_IMPORTS)}")
        elif isinstance(node, ast.Name) and (node.id in FORBIDDEN_NAMES or node.id.startswith("_")):
            out.append(f"line {line}: name: {node.id!r} is not allowed (I/O or dynamic code)")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            out.append(f"line {line}: attribute: {node.attr!r} (no private or dunder attributes)")
        elif isinstance(node, ast.While | ast.AsyncFunctionDef | ast.ClassDef | ast.Global
                        | ast.Nonlocal | ast.Await | ast.Yield | ast.YieldFrom):  # fmt: skip
            out.append(f"line {line}: statement: {type(node).__name__} is not allowed")
        elif isinstance(node, ast.FunctionDef) and node not in funcs:
            out.append(f"line {line}: statement: nested function {node.name!r}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == FUNCTION
        ):
            out.append(f"line {line}: recursion: {FUNCTION} calls itself")
        elif isinstance(node, ast.Constant) and _is_threshold(node):
            out.append(f"line {line}: threshold: the number {node.value!r} must be a parameter")
    return out


def _is_threshold(node: ast.Constant) -> bool:
    if isinstance(node.value, bool):
        return False
    return isinstance(node.value, int | float) and node.value not in SMALL_NUMBERS


def _import(name: str, *args: Any, **kwargs: Any) -> Any:
    if name.split(".")[0] not in ALLOWED_IMPORTS:
        raise ImportError(f"{name} is not allowed")
    return builtins.__import__(name, *args, **kwargs)


def facts_view(facts: Facts) -> dict[str, Any]:
    """The plain data a synthesised operator sees."""
    series = {
        name: [
            {"kind": p.kind, "name": p.name, "baseline": list(p.baseline), "alert": list(p.alert)}
            for p in probes
        ]
        for name, probes in facts.probes.items()
    }
    logs = {
        name: {"baseline": len(b), "alert": len(a),
               "baseline_errors": sum(1 for x in b if x.level in ERROR_LEVELS),
               "alert_errors": sum(1 for x in a if x.level in ERROR_LEVELS)}
        for name, (b, a) in facts.logs.items()
    }  # fmt: skip
    win = facts.windows
    return {
        "anchor": facts.anchor,
        "candidates": sorted({facts.anchor, *facts.nodes}),
        "series": series,
        "edges": [
            {
                "src": e.src,
                "dst": e.dst,
                "error_rate": e.error_rate,
                "latency_p95_ms": e.latency_p95_ms,
                "trace_count": e.trace_count,
                "stale": e.stale,
            }
            for e in facts.edges
        ],
        "logs": logs,
        "changes": [{"service": c.service, "kind": c.kind, "at": c.at} for c in facts.changes],
        "window": {"alert": list(win.alert), "baseline": list(win.baseline)} if win else None,
    }


@dataclass(frozen=True)
class Source:
    """A synthesised operator as the model wrote it: name, code, parameter defaults."""

    name: str
    code: str
    params: Mapping[str, float]
    doc: str = ""


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(float(v))


def compile_operator(src: Source) -> Operator:
    """The gate, then the operator: a scorer `(Aggregate) -> ScoredCandidates` reading the
    facts view; GateError naming every rule the code breaks."""
    reasons: list[str] = []
    if not src.name.isidentifier() or src.name.startswith("_"):
        reasons.append(f"name: {src.name!r} is not a plain identifier")
    bad = {k: v for k, v in src.params.items() if not _number(v) or not k.isidentifier()}
    if bad:
        reasons.append(f"params: numbers with identifier names only, got {bad}")
    try:
        tree = ast.parse(src.code, mode="exec")
    except SyntaxError as exc:
        raise GateError([f"line {exc.lineno}: syntax: {exc.msg}"]) from exc
    reasons += _check(tree)
    if reasons:
        raise GateError(reasons)
    safe = {name: getattr(builtins, name) for name in _SAFE_BUILTINS}
    namespace: dict[str, Any] = {"__builtins__": {**safe, "__import__": _import}}
    exec(compile(tree, f"<operator {src.name}>", "exec"), namespace)  # the AST passed the gate
    fn = namespace[FUNCTION]
    defaults = {k: float(v) for k, v in src.params.items()}
    digest = hashlib.sha256(f"{src.code}\n{sorted(defaults.items())}".encode()).hexdigest()

    def run(call: Call) -> Signal:
        params = {k: float(call.params.get(k, v)) for k, v in defaults.items()}
        try:
            raw = fn(facts_view(call.facts(0)), params)
        except Exception as exc:  # its failure is its abstention, never the plan's
            return votes(src.name, {}, abstained=f"failed: {type(exc).__name__}: {exc}")
        if not isinstance(raw, Mapping):
            return votes(src.name, {}, abstained="did not return {service: score}")
        scores = {str(k): float(v) for k, v in raw.items()
                  if isinstance(v, int | float) and math.isfinite(float(v))}  # fmt: skip
        return votes(src.name, scores, abstained="" if scores else "scored no candidate")

    params = {k: Param(NUMBER, v, "declared by the operator") for k, v in defaults.items()}
    return Operator(src.name, (AGGREGATE,), SCORED, run, src.doc or "synthesised", params,
                    source=f"custom:{src.name}", custom=True, digest=digest)  # fmt: skip
