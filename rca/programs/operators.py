"""Operators: typed functions a program composes. Each declares its signature (input types,
output type, parameters); its kind follows from its output type (`types.KIND`).

    Operator("anomaly", inputs=(AGGREGATE,), output=SCORED, run=..., source="metrics")

`run` gets a `Call`: the investigation's context, the argument values with the names of
the bindings they came from, and the parameters resolved (`auto` already estimated).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stackgraph.store import GraphReader

from ..facts import Facts, NodeFact, Request
from ..model import Alert
from .types import AUTO, KIND, NUMBER, SET

__all__ = ["Call", "Context", "Operator", "Param"]


@dataclass(frozen=True)
class Context:
    """What one investigation was asked, fixed for all its attempts: the engine's cache is
    valid only within one context."""

    store: GraphReader
    alert: Alert
    anchor: NodeFact
    request: Request
    """The investigation's request; its windows are the default rule's (see `windows`)."""
    at: float | None = None
    baseline: tuple[float, float] | None = None
    """A baseline the caller asked for (e.g. the same hour yesterday)."""


@dataclass(frozen=True)
class Call:
    """One binding's evaluation: its arguments, their binding names, its parameters."""

    ctx: Context
    args: Sequence[Any]
    names: Sequence[str]
    params: Mapping[str, Any]

    def facts(self, i: int = 0) -> Facts:
        value = self.args[i]
        if not isinstance(value, Facts):
            raise TypeError(f"argument {i} ({self.names[i]}) is not facts")
        return value


@dataclass(frozen=True)
class Param:
    """A declared parameter: its data type, its default, and, when it may be `auto`, how
    the engine estimates it."""

    type: str
    default: Any
    doc: str = ""
    auto: str = ""
    """How `auto` is estimated; empty when the parameter cannot be `auto`."""

    def accepts(self, value: Any) -> bool:
        if value == AUTO:
            return bool(self.auto)
        if self.type == NUMBER:
            return isinstance(value, int | float) and not isinstance(value, bool)
        if self.type == SET:
            return isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)
        return isinstance(value, str)


@dataclass(frozen=True)
class Operator:
    """A typed function of the library. `variadic`: the last input type may repeat (zero or
    more times). Scorers say which data `source` they read and whether they are a `prior`
    (tie-breaker); `roles` name the scored arguments a scorer reads, in order."""

    name: str
    inputs: tuple[str, ...]
    output: str
    run: Callable[[Call], Any]
    doc: str = ""
    params: Mapping[str, Param] = field(default_factory=dict)
    variadic: bool = False
    source: str | None = None
    prior: bool = False
    roles: tuple[str, ...] = ()
    custom: bool = False
    digest: str = ""
    """For a synthesised operator: the sha256 of its source, part of every cache key."""

    @property
    def kind(self) -> str:
        return KIND[self.output]

    def accepts(self, types: Sequence[str]) -> str | None:
        """None when arguments of these types fit the signature; else what is wrong."""
        fixed = self.inputs[:-1] if self.variadic else self.inputs
        if len(types) < len(fixed) or (not self.variadic and len(types) != len(fixed)):
            want = f"at least {len(fixed)}" if self.variadic else str(len(fixed))
            return f"takes {want} argument(s), got {len(types)}"
        for i, t in enumerate(types):
            want = self.inputs[min(i, len(self.inputs) - 1)]
            if t != want:
                return f"argument {i + 1} is {t}, {self.name} expects {want}"
        return None

    def signature(self) -> str:
        args = list(self.inputs)
        if self.variadic:
            args[-1] = f"{args[-1]}..."
        return f"{self.name}({', '.join(args)}) -> {self.output}"

    def describe(self) -> dict[str, Any]:
        """The operator as data: what `program list` prints and a model is shown."""
        return {
            "name": self.name,
            "kind": self.kind,
            "signature": self.signature(),
            "doc": self.doc,
            "params": {k: {"type": p.type, "default": p.default, "auto": p.auto, "doc": p.doc}
                       for k, p in self.params.items()},
            **({"source": self.source} if self.source else {}),
            **({"prior": True} if self.prior else {}),
            **({"custom": True, "digest": self.digest} if self.custom else {}),
        }  # fmt: skip
