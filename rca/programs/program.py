"""A program: a straight-line list of named bindings ending in one answer, as data.

```yaml
program: default
bindings:
  - {name: window, op: windows}
  - {name: near, op: khop, params: {hops: auto}}
  - {name: candidates, op: callers, args: [near]}
  - {name: metrics, op: probes, args: [candidates, window]}
  - {name: facts, op: merge, args: [candidates, window, metrics]}
  - {name: anomaly, op: anomaly, args: [facts]}
  - {name: answer, op: fuse, args: [facts, anomaly]}
```

`parse` reads that shape (YAML or JSON, or the dict) and refuses a malformed one naming
the binding and field; whether it makes sense is the verifier's job (`verify`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

import yaml

from stackgraph.errors import InputError

__all__ = ["Binding", "Program", "ProgramError", "parse", "playbook", "playbook_names"]


class ProgramError(InputError):
    """A program that cannot be read or does not verify; `problems` name binding and rule."""

    def __init__(self, program: str, problems: Sequence[str]) -> None:
        self.program = program
        self.problems = tuple(problems)
        super().__init__(f"program {program!r}: " + "; ".join(self.problems))


@dataclass(frozen=True)
class Binding:
    name: str
    op: str
    args: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "op": self.op}
        if self.args:
            out["args"] = list(self.args)
        if self.params:
            out["params"] = dict(self.params)
        return out


@dataclass(frozen=True)
class Program:
    name: str
    bindings: tuple[Binding, ...]
    description: str = ""
    origin: str = "playbook"
    """How it was made: playbook (shipped), composed (stage 2), file (a user's)."""

    @property
    def answer(self) -> Binding:
        return self.bindings[-1]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"program": self.name}
        if self.description:
            out["description"] = self.description
        out["origin"] = self.origin
        out["bindings"] = [b.to_dict() for b in self.bindings]
        return out

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False, width=100)

    @property
    def digest(self) -> str:
        """What the program computes, not what it is called: bindings only."""
        body = json.dumps([b.to_dict() for b in self.bindings], sort_keys=True)
        return hashlib.sha256(body.encode()).hexdigest()[:16]


def _text(value: Any, where: str, problems: list[str]) -> str:
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{where}: expected a non-empty string, got {value!r}")
        return ""
    return value.strip()


def parse(source: str | Mapping[str, Any], *, origin: str = "file") -> Program:
    """A Program from YAML/JSON text or its dict; ProgramError naming what is malformed."""
    if isinstance(source, str):
        try:
            data = yaml.safe_load(source)
        except yaml.YAMLError as exc:
            raise ProgramError("?", [f"not YAML or JSON: {exc}"]) from exc
    else:
        data = source
    if not isinstance(data, Mapping):
        raise ProgramError("?", ["expected a mapping with `program` and `bindings`"])
    problems: list[str] = []
    name = _text(data.get("program"), "program", problems) or "?"
    raw = data.get("bindings")
    if not isinstance(raw, list) or not raw:
        raise ProgramError(name, ["bindings: expected a non-empty list"])
    bindings: list[Binding] = []
    for i, b in enumerate(raw):
        where = f"binding {i + 1}"
        if not isinstance(b, Mapping):
            problems.append(f"{where}: expected a mapping with name, op, args, params")
            continue
        extra = sorted(set(b) - {"name", "op", "args", "params"})
        if extra:
            problems.append(f"{where}: unknown field(s) {extra}")
        bname = _text(b.get("name"), f"{where} name", problems)
        where = f"binding {bname!r}" if bname else where
        op = _text(b.get("op"), f"{where} op", problems)
        args = b.get("args") or []
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            problems.append(f"{where}: args must be a list of binding names")
            args = []
        params = b.get("params") or {}
        if not isinstance(params, Mapping):
            problems.append(f"{where}: params must be a mapping")
            params = {}
        bindings.append(Binding(bname, op, tuple(args), dict(params)))
    if problems:
        raise ProgramError(name, problems)
    description = data.get("description")
    return Program(name, tuple(bindings), str(description or ""),
                   str(data.get("origin") or origin))  # fmt: skip


_PLAYBOOKS = files(__package__) / "playbooks"


def playbook_names() -> list[str]:
    """The shipped playbooks (`rca/programs/playbooks/*.yaml`)."""
    return sorted(p.name[: -len(".yaml")] for p in _PLAYBOOKS.iterdir()
                  if p.name.endswith(".yaml"))  # fmt: skip


def playbook(name: str) -> Program:
    """A shipped playbook by name; ProgramError when there is none."""
    if name not in playbook_names():
        raise ProgramError(name, [f"no such playbook; shipped: {', '.join(playbook_names())}"])
    return parse((_PLAYBOOKS / f"{name}.yaml").read_text(encoding="utf-8"), origin="playbook")
