"""Stage 3 (model only): a new operator. The model writes a scorer (`gate.Source`); the
gate checks it (`gate.compile_operator`); it joins the library only if, on replay, it
resolves the incident that escalated and does not lower AC@1 on the datasets the caller
replays (`Admission`). At most MAX_CUSTOM custom operators are kept, the least used leaves
first; every admission is recorded with its evidence (`CustomLibrary.records`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stackgraph.schema import NodeRecord, RecordBatch

from ..model import Alert
from .gate import ALLOWED_IMPORTS, FUNCTION, GateError, Source, compile_operator
from .model_stages import ModelClient, Refused, library_doc
from .operators import Operator

__all__ = ["MAX_CUSTOM", "Admission", "CustomLibrary", "Synthesis", "synthesise"]

MAX_CUSTOM = 19

SYNTH_PROMPT = f"""You write one new scorer for root-cause analysis, as JSON:
{{"name": NAME, "doc": ONE_LINE, "params": {{NAME: NUMBER}}, "code": PYTHON}}.
The code defines exactly `def {FUNCTION}(facts, params):` and returns {{service: score}},
higher meaning more likely the root cause. `facts` is plain data: anchor, candidates,
series[service] = [{{kind, name, baseline: [..], alert: [..]}}], edges [{{src, dst,
error_rate, latency_p95_ms, trace_count, stale}}], logs[service] = {{baseline, alert,
baseline_errors, alert_errors}}, changes [{{service, kind, at}}], window. Imports only from
{sorted(ALLOWED_IMPORTS)}; no I/O, no eval/exec, no private attributes, no while loops; any
threshold or constant other than 0, 1, 2, -1 must be a parameter. The existing operators
did not rank the true root cause among the first three; write one that reads the evidence
they miss."""


@dataclass(frozen=True)
class Admission:
    """Whether a synthesised operator joins the library, and the replay evidence."""

    admitted: bool
    why: str
    evidence: Mapping[str, Any] = field(default_factory=dict)


Check = Callable[[Operator], tuple[bool, Mapping[str, Any]]]
"""(operator) -> (passed, evidence): a replay the caller runs."""


@dataclass(frozen=True)
class Synthesis:
    """What stage 3 produced: the operator and its source (None when nothing passed the
    gate), whether it was admitted, and each refusal on the way."""

    op: Operator | None
    source: Source | None
    admission: Admission
    said: tuple[str, ...] = ()


def synthesise(
    client: ModelClient,
    library: Mapping[str, Operator],
    alert: Alert,
    refuted: Iterable[str],
    resolves: Check,
    no_regression: Check,
) -> Synthesis:
    """Ask, gate (refusals go back to the model for at most two repairs), then admit on
    replay."""
    doc = {"alert": {"labels": dict(alert.labels)}, "refuted_leads": sorted(set(refuted)),
           "operators": library_doc(library)}  # fmt: skip
    messages = [{"role": "system", "content": SYNTH_PROMPT},
                {"role": "user", "content": json.dumps(doc)}]  # fmt: skip

    def accept(text: str) -> tuple[Operator, Source]:
        try:
            data = json.loads(text)
            src = Source(str(data["name"]), str(data["code"]), dict(data.get("params") or {}),
                         str(data.get("doc") or ""))  # fmt: skip
        except (ValueError, KeyError, TypeError) as exc:
            raise Refused([f"not the JSON asked: {exc}"]) from exc
        if src.name in library:
            raise Refused([f"name: {src.name!r} is already an operator"])
        try:
            return compile_operator(src), src
        except GateError as exc:
            raise Refused([f"the gate: {r}" for r in exc.reasons]) from exc

    made, _, said = client.until_accepted(messages, accept, "operator")
    if made is None:
        return Synthesis(None, None, Admission(False, said[-1] if said else "no answer"),
                         tuple(said))  # fmt: skip
    op, src = made
    ok, resolved = resolves(op)
    if not ok:
        refused = Admission(False, "does not resolve the incident", {"incident": resolved})
        return Synthesis(op, src, refused, tuple(said))
    ok, held = no_regression(op)
    evidence = {"incident": resolved, "datasets": held}
    verdict = (Admission(True, "resolves the incident, AC@1 held", evidence) if ok
               else Admission(False, "lowers AC@1 on replay", evidence))  # fmt: skip
    return Synthesis(op, src, verdict, tuple(said))


@dataclass
class CustomLibrary:
    """The admitted operators: at most MAX_CUSTOM, the least used evicted first."""

    operators: dict[str, Operator] = field(default_factory=dict)
    uses: dict[str, int] = field(default_factory=dict)
    admissions: dict[str, Admission] = field(default_factory=dict)
    sources: dict[str, Source] = field(default_factory=dict)
    evicted: list[str] = field(default_factory=list)

    def admit(self, op: Operator, src: Source, admission: Admission) -> None:
        if not admission.admitted:
            return
        while len(self.operators) >= MAX_CUSTOM:
            least = min(self.operators, key=lambda n: (self.uses.get(n, 0), n))
            self.operators.pop(least)
            self.evicted.append(least)
        self.operators[op.name] = op
        self.sources[op.name] = src
        self.admissions[op.name] = admission
        self.uses.setdefault(op.name, 0)

    def used(self, names: Iterable[str]) -> None:
        for n in names:
            if n in self.operators:
                self.uses[n] = self.uses.get(n, 0) + 1

    def library(self, builtin: Mapping[str, Operator]) -> dict[str, Operator]:
        return {**builtin, **self.operators}

    def records(self, now: float | None = None) -> RecordBatch:
        """Each admitted operator as an `Operator` node (code, parameters, uses, admission
        evidence; source LlmInferred: a model wrote it) and each evicted one Deprecated."""
        batch = RecordBatch()
        at = time.time() if now is None else now
        for name, op in self.operators.items():
            src = self.sources[name]
            batch.nodes.append(NodeRecord("Operator", {"name": name}, {
                "code": src.code, "params_json": json.dumps(dict(src.params), sort_keys=True),
                "digest": op.digest, "uses": self.uses.get(name, 0), "admitted_at": at,
                "admission_json": json.dumps(self.admissions[name].evidence, sort_keys=True,
                                             default=str)[:100_000],
            }, "LlmInferred", "Active"))  # fmt: skip
        for name in self.evicted:
            batch.nodes.append(NodeRecord("Operator", {"name": name}, {"evicted_at": at},
                                          "LlmInferred", "Deprecated"))  # fmt: skip
        return batch
