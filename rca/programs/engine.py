"""The engine: runs a verified program, binding by binding, and caches each binding's value
under a recursive hash of its operator, its resolved parameters and its inputs' hashes, so
a second program (a later attempt on the same incident) reuses what did not change: the
neighbourhood and the telemetry are read once, whatever the programs score them with.

    engine = Engine(context)
    run = engine.run(program)          # verified first; ProgramError if it does not
    run.answer.candidates, run.costs, run.chosen

Cost is recorded per binding: seconds, rows read from the graph, points read from the
metrics source (zero when the value came from the cache). `auto` parameters are
estimated and reported in `run.chosen`:

- `khop.hops`: the depth the investigation was asked for (the deployment's setting);
- `windows.baseline_end`: 0, unless no candidate has a single series in that baseline
  (a scrape gap, a restart, a recording made apart); then the baseline moves back to end
  at the anchor's last recorded data, or its neighbours' where it has none
  (`rca.baseline.recorded_baseline`), and the bindings
  that read the window run again.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from stackgraph.store import GraphReader

from ..baseline import recorded_baseline
from ..facts import Facts
from ..model import MetricsSource
from ..read_time import UNAVAILABLE
from ..scorers import Signal
from ..windows import Windows
from .library import BUILTIN
from .operators import Call, Context, Operator
from .program import Program
from .types import AUTO, SCORED, Answer, Scored
from .verifier import verify

__all__ = ["CACHE_NODES", "Engine", "NodeCost", "Run"]

CACHE_NODES = 512
"""Values kept per engine: a few programs' worth of bindings for one incident."""


@dataclass(frozen=True)
class NodeCost:
    binding: str
    op: str
    seconds: float
    graph_rows: int = 0
    metric_points: int = 0
    cached: bool = False


@dataclass(frozen=True)
class Run:
    """One program's run: the answer, the aggregate it ranked, the windows, what each
    binding cost, the values chosen for `auto` parameters and the notes on the way."""

    program: Program
    answer: Answer
    aggregate: Facts
    costs: tuple[NodeCost, ...]
    chosen: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def windows(self) -> Windows | None:
        return self.aggregate.windows

    def cost(self) -> dict[str, float]:
        """Totals over the bindings that ran (cached ones cost nothing)."""
        return {
            "seconds": round(sum(c.seconds for c in self.costs), 4),
            "graph_rows": sum(c.graph_rows for c in self.costs),
            "metric_points": sum(c.metric_points for c in self.costs),
            "cached": sum(1 for c in self.costs if c.cached),
        }


class _CountingReader(GraphReader):
    """The read port, counting rows; every read goes to the wrapped port."""

    def __init__(self, inner: GraphReader) -> None:  # not super(): every read is delegated
        self._inner = inner
        self.graph_name, self.where, self.timeout_ms = (
            inner.graph_name,
            inner.where,
            inner.timeout_ms,
        )
        self.rows = 0

    def exists(self) -> bool:
        return self._inner.exists()

    def read(self, query: Any, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        rows = self._inner.read(query, params)
        self.rows += len(rows)
        return rows


class _CountingMetrics:
    """A MetricsSource counting the points it hands out (probes ask it from several
    threads, so the count is kept under a lock)."""

    def __init__(self, inner: MetricsSource) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self.source_name = str(getattr(inner, "source_name", type(inner).__name__))
        self.points_read = 0

    def __getattr__(self, name: str) -> Any:
        """The source's optional attributes (`MetricsSource`), as the source has them."""
        if name.startswith("_"):  # not yet set (a copy in the making): no recursion
            raise AttributeError(name)
        return getattr(self._inner, name)

    def kinds(self, service: str, start: float, end: float) -> Sequence[str]:
        return self._inner.kinds(service, start, end)

    def points(
        self, service: str, kind: str, start: float, end: float
    ) -> Sequence[tuple[float, float]]:
        out = self._inner.points(service, kind, start, end)
        with self._lock:
            self.points_read += len(out)
        return out


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class Engine:
    """Runs programs for one investigation (`Context`), sharing one cache between them."""

    def __init__(self, ctx: Context, library: Mapping[str, Operator] = BUILTIN) -> None:
        self.library = library
        self._reader = _CountingReader(ctx.store)
        metrics = ctx.request.metrics
        self._metrics = _CountingMetrics(metrics) if metrics is not None else None
        self.ctx = replace(ctx, store=self._reader,
                           request=replace(ctx.request, metrics=self._metrics))  # fmt: skip
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._moved: dict[str, tuple[Windows, str]] = {}
        """Per windows binding with `baseline_end: auto`: the baseline it moved to."""
        self._failed: list[str] = []
        self._tried: set[str] = set()

    def reads(self) -> tuple[int, int]:
        """(graph rows, metric points) read so far by every program this engine ran."""
        return self._reader.rows, self._metrics.points_read if self._metrics else 0

    def run(self, program: Program) -> Run:
        verify(program, self.library)
        run = self._pass(program)
        tried = len(self._failed)
        if self._move_baseline(program, run) or len(self._failed) > tried:
            return self._pass(program)  # what the window did not touch comes from the cache
        return run

    def _resolve(self, op: Operator, binding: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """The binding's parameters with defaults filled in, `auto` left for the operator
        (it knows the context) except where the engine itself estimated it."""
        out = {k: p.default for k, p in op.params.items()}
        out.update(params)
        if op.name == "windows" and binding in self._moved:
            out["moved_to"] = list(self._moved[binding][0].baseline)
        return out

    def _pass(self, program: Program) -> Run:
        keys: dict[str, str] = {}
        values: dict[str, Any] = {}
        costs: list[NodeCost] = []
        chosen: dict[str, dict[str, Any]] = {}
        for b in program.bindings:
            op = self.library[b.op]
            params = self._resolve(op, b.name, b.params)
            key = _digest(op.name, op.digest, params, [keys[a] for a in b.args])
            keys[b.name] = key
            if key in self._cache:
                self._cache.move_to_end(key)
                values[b.name] = self._cache[key]
                costs.append(NodeCost(b.name, op.name, 0.0, cached=True))
                continue
            rows0 = self._reader.rows
            points0 = self._metrics.points_read if self._metrics else 0
            t0 = time.perf_counter()
            call = Call(self.ctx, [values[a] for a in b.args], b.args, params)
            value: Any = self._moved[b.name][0] if b.name in self._moved else op.run(call)
            if op.output == SCORED and isinstance(value, Signal):
                value = Scored(value, op.source, op.prior)
            costs.append(NodeCost(
                b.name, op.name, round(time.perf_counter() - t0, 6), self._reader.rows - rows0,
                (self._metrics.points_read if self._metrics else 0) - points0,
            ))  # fmt: skip
            values[b.name] = value
            self._cache[key] = value
            while len(self._cache) > CACHE_NODES:
                self._cache.popitem(last=False)
        for b in program.bindings:
            auto = self._chosen(b, values[b.name])
            if auto:
                chosen[b.name] = auto
        answer = values[program.answer.name]
        aggregate = values[program.answer.args[0]]
        notes = (*(note for _, note in self._moved.values()), *aggregate.notes, *self._failed)
        return Run(program, answer, aggregate, tuple(costs), chosen, notes)

    def _chosen(self, b: Any, value: Any) -> dict[str, Any]:
        """What each `auto` parameter of binding `b` was estimated as."""
        op = self.library[b.op]
        auto = [k for k, p in op.params.items() if b.params.get(k, p.default) == AUTO]
        out: dict[str, Any] = {}
        for k in auto:
            if op.name == "khop" and k == "hops":
                out[k] = self.ctx.request.hops
            elif op.name == "windows" and k == "baseline_end" and isinstance(value, Windows):
                out[k] = round(value.alert[0] - value.baseline[1], 3)
        return out

    def _move_baseline(self, program: Program, run: Run) -> bool:
        """`baseline_end: auto` (module docstring): True when a baseline moved."""
        facts = run.aggregate
        metrics = self.ctx.request.metrics
        if metrics is None or facts.probes or self.ctx.baseline is not None:
            return False
        if any(n.startswith(UNAVAILABLE) for n in facts.notes) or facts.windows is None:
            return False
        moved = False
        for b in program.bindings:
            if b.op != "windows" or b.params.get("baseline_end", AUTO) != AUTO:
                continue
            probed = any(p.op == "probes" and b.name in p.args for p in program.bindings)
            if b.name in self._tried or not probed:  # nothing probed: nothing to compare
                continue
            self._tried.add(b.name)
            try:
                anchor = self.ctx.anchor.name
                nearest = sorted(n.name for n in facts.nodes.values()
                                 if n.name != anchor and n.depth <= 1)  # fmt: skip
                found = recorded_baseline(metrics, [anchor, *nearest], facts.windows)
            except Exception as exc:  # a remote call: the plan stands without it
                self._failed.append(f"no older baseline found: {exc}")
                continue
            if found is not None:
                self._moved[b.name] = found
                moved = True
        return moved
