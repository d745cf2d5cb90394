"""`evaluate(...)`: replay a labelled dataset through the product path, beside every
baseline given the same inputs, and score.

    cases ─▶ place (recordings apart in time) ─▶ OpenMetrics ─▶ promtool ─▶ Prometheus
          └▶ per case: lanes ─▶ alert from the data ─▶ Planner + PrometheusMetrics
                       └▶ observe (read back) ─▶ baselines, +releases variants ─▶ scorecard

A dataset is written into Prometheus once, not once per case. Adapters: the built-in
ones, any registered under the entry-point group `stackgraph.datasets`, or one named as
`module:function` (a callable from a folder to `list[Case]`).
"""

from __future__ import annotations

import importlib
import json
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from stackgraph.config import Settings
from stackgraph.ingest import GraphIngestor
from stackgraph.promql import PromQLNames
from stackgraph.schema import NodeRecord, RecordBatch
from stackgraph.store import GraphStore

from .ablation import ablations
from .baselines import BASELINES, RELEASES, Method, released_first
from .datasets import ADAPTERS, DatasetError
from .datasets.model import SERVICE_SIGNALS, Case
from .lane_files import write_logs, write_spans
from .narrowed import left_out, narrowed
from .openmetrics import SERVICE_ERRORS_PROMQL, place, write_openmetrics
from .promserver import running_prometheus
from .replay import Replay, Replayer
from .scorecard import OURS, CaseResult, scorecard

ENTRY_POINTS = "stackgraph.datasets"
Adapter = Callable[[Path], list[Case]]
Progress = Callable[[int, int, str], None]
"""(cases done, cases in all, the case's id)."""


def adapters() -> dict[str, Adapter]:
    """Built-in adapters, then those installed under the `stackgraph.datasets` group."""
    from .seeded import NAME as SEEDED
    from .seeded import load_seeded

    found: dict[str, Adapter] = {**ADAPTERS, SEEDED: load_seeded}
    for ep in entry_points(group=ENTRY_POINTS):
        found.setdefault(ep.name, ep.load())
    return found


def adapter_from(spec: str) -> Adapter:
    """A `module:function` adapter; a clear DatasetError when it cannot be loaded."""
    module, sep, attr = spec.partition(":")
    if not sep or not module or not attr:
        raise DatasetError(f"adapter {spec!r}: expected module:function")
    try:
        fn = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise DatasetError(f"adapter {spec!r}: {exc}") from exc
    if not callable(fn):
        raise DatasetError(f"adapter {spec!r} is not callable")
    return fn


def load(name: str, path: Path | None, adapter: str | None = None) -> list[Case]:
    """The cases of dataset `name` (its folder `path`), through `adapter` when given."""
    from .seeded import DEFAULT_PATH
    from .seeded import NAME as SEEDED

    if adapter is not None:
        fn = adapter_from(adapter)
    else:
        known = adapters()
        if name not in known:
            raise DatasetError(f"unknown dataset {name!r}; known: {', '.join(sorted(known))}")
        fn = known[name]
    if path is None and name == SEEDED and adapter is None:
        path = DEFAULT_PATH
    if path is None:
        raise DatasetError(f"dataset {name!r} needs --path (its folder)")
    if not Path(path).is_dir():
        raise DatasetError(f"dataset {name!r}: folder {path} does not exist")
    cases = fn(Path(path))
    if not isinstance(cases, list) or not all(isinstance(c, Case) for c in cases):
        raise DatasetError(f"dataset {name!r}: the adapter must return a list of Case")
    return cases


def manifests_beside(path: Path | None) -> Path | None:
    """The shared `manifests` folder beside a dataset's folder, if there is one."""
    if path is None:
        return None
    guess = Path(path).parent / "manifests"
    return guess if guess.is_dir() else None


def methods_for(cases: list[Case]) -> dict[str, Method]:
    """Every baseline, and its `+releases` variant when any case has releases."""
    out = dict(BASELINES)
    if any(c.changes for c in cases):
        out |= {f"{n}{RELEASES}": released_first(fn) for n, fn in BASELINES.items()}
    return out


def _score(replay: Replay, methods: dict[str, Method], ablation: bool = False) -> CaseResult:
    ranks = {OURS: replay.ranking}
    seconds = {OURS: replay.seconds["investigate"]}
    if ablation:
        ranks |= ablations(replay.plan, replay.case.services)
    for name, fn in methods.items():
        t = time.perf_counter()
        ranks[name] = fn(replay.observed)
        seconds[name] = time.perf_counter() - t
    notes = [*replay.notes, *replay.plan.notes]
    fail_open = (replay.plan.reason or "no candidates") if replay.failed_open else None
    votes = {c.service: dict(c.signals) for c in replay.plan.candidates} if ablation else {}
    attempts = [a.as_dict() for a in replay.attempts]
    return CaseResult(replay.case, ranks, seconds, replay.alert, fail_open, notes, votes,
                      attempts)  # fmt: skip


@contextmanager
def dataset_prometheus(
    cases: list[Case], settings: Settings, spent: dict[str, float]
) -> Iterator[tuple[dict[str, Any], dict[str, int]]]:
    """The placed cases' telemetry written once into a real Prometheus (and their log lines
    and spans into files), for the block's duration: yields the settings that point the
    read path at them (`prometheus_url`, `logs_path`, `traces_path`) and what was written
    (series, samples, log lines, spans). Adds `openmetrics_s` and `backfill_s` to `spent`."""
    with tempfile.TemporaryDirectory(prefix="sg-eval-prom-") as tmp:
        t = time.perf_counter()
        om = Path(tmp) / "dataset.om"
        with om.open("w", encoding="utf-8") as fh:
            stats = write_openmetrics(cases, fh, PromQLNames.from_settings(settings))
        spent["openmetrics_s"] = time.perf_counter() - t
        t = time.perf_counter()
        logs, traces = Path(tmp) / "logs", Path(tmp) / "spans"
        lines = write_logs(logs / "lines.jsonl", (r for c in cases for r in c.logs))
        spans = write_spans(traces / "spans.csv", (s for c in cases for s in c.spans))
        with running_prometheus(Path(tmp), om) as url:
            spent["backfill_s"] = time.perf_counter() - t
            sources: dict[str, Any] = {
                "prometheus_url": url, "loki_url": None,
                "logs_path": logs if lines else None, "traces_path": traces if spans else None,
            }  # fmt: skip
            own = any(m.client is None and m.name in SERVICE_SIGNALS for c in cases
                      for m in c.metrics)  # fmt: skip
            if own and "errors" not in settings.telemetry_extra_promql:
                # a platform whose services report their own errors reads them there
                sources["telemetry_extra_promql"] = {**settings.telemetry_extra_promql,
                                                     "errors": SERVICE_ERRORS_PROMQL}  # fmt: skip
            yield sources, {"series": stats.series, "samples": stats.samples,
                            "log_lines": lines, "spans": spans}  # fmt: skip


def composed_records(dataset: str, results: list[CaseResult]) -> RecordBatch:
    """Each program stage 2 or 3 made that resolved a case, as a `Program` node (origin
    composed) with its admission evidence: the case, the stage and the leads it gave."""
    batch = RecordBatch()
    for r in results:
        for a in r.attempts:
            if a["sufficient"] and a.get("composed"):
                evidence = {"dataset": dataset, "case": r.case.case_id, "stage": a["stage"],
                            "top": a["top"], "why": a["why"]}  # fmt: skip
                made = a["composed"]
                batch.nodes.append(NodeRecord("Program", {"digest": a["digest"]}, {
                    "name": str(made.get("program", "")), "origin": "composed",
                    "program_json": json.dumps(made, sort_keys=True),
                    "admission_json": json.dumps(evidence, sort_keys=True),
                }, "Synthetic"))  # fmt: skip
    return batch


def evaluate(
    name: str,
    path: Path | None,
    store: GraphStore,
    *,
    settings: Settings,
    adapter: str | None = None,
    manifests_root: Path | None = None,
    limit: int | None = None,
    progress: Progress | None = None,
    ablation: bool = False,
    attempts: int = 3,
    feedback: bool = False,
    only: frozenset[str] | None = None,
    topology: bool = True,
) -> dict[str, Any]:
    """The scorecard of StackGraph and every baseline on the same cases, in one run; with
    `ablation`, also StackGraph without each scorer and each scorer alone (`eval.ablation`);
    `attempts`: stages of `rca.programs` per case, for Accuracy@3,i (0: none); with
    `feedback`, each case's graph also holds the root causes confirmed for the cases before
    it, as a platform's users' feedback leaves them (`Replayer.feedback`); with `only`,
    each case keeps only those sources (`eval.narrowed`), for every method alike; without
    `topology`, no case states its call graph or manifests."""
    cases = narrowed(load(name, path, adapter)[:limit], only, topology)
    manifests_root = manifests_root or manifests_beside(path)
    cases = place(cases)
    methods = methods_for(cases)
    results: list[CaseResult] = []
    skipped: list[dict[str, str]] = []
    spent: dict[str, float] = {}
    with dataset_prometheus(cases, settings, spent) as (sources, stats):
        replayer = Replayer(store, settings.model_copy(update=sources), manifests_root,
                            attempts=attempts, feedback=feedback)  # fmt: skip
        try:
            for i, case in enumerate(cases):
                if progress is not None:
                    progress(i, len(cases), case.case_id)
                try:
                    replay = replayer.run(case, i)
                except Exception as exc:  # one broken case is listed, not fatal
                    skipped.append({"case_id": case.case_id,
                                    "reason": f"{type(exc).__name__}: {exc}"})  # fmt: skip
                    continue
                for k, v in replay.seconds.items():
                    spent[f"{k}_s"] = spent.get(f"{k}_s", 0.0) + v
                results.append(_score(replay, methods, ablation))
        finally:
            replayer.close()
        admitted = replayer.custom.records()
        admitted.extend(composed_records(name, results))
        if admitted.nodes:  # what stages 2-3 made that resolved a case, with the evidence
            with GraphIngestor(store, who="eval") as writer:
                writer.write(admitted)
    lines, spans = stats["log_lines"], stats["spans"]
    n = max(1, len(results))
    cost = {
        "series": stats["series"],
        "samples": stats["samples"],
        "log_lines": lines,
        "spans": spans,
        "openmetrics_s": round(spent.pop("openmetrics_s"), 2),
        "backfill_s": round(spent.pop("backfill_s"), 2),
        **{f"{k.removesuffix('_s')}_s_per_case": round(v / n, 3) for k, v in spent.items()},
    }
    notes = [
        "alert time from the symptom's own series (eval/alerting.py); the plan's windows are "
        "the read path's own, from the alert alone (no label: not the dataset's fault-free "
        "window); every method reads those windows",
        *left_out(only, topology),
        *(
            [
                "feedback: each case's graph holds the root causes confirmed for the cases "
                "before it (the history prior reads them); the baselines see none"
            ]
            if feedback
            else []
        ),
        "every baseline ranks the case as read back from Prometheus (eval/replay.observe)"
        + (
            f"; {RELEASES} variants put released services first"
            if len(methods) > len(BASELINES)
            else ""
        ),
    ]
    return scorecard(name, results, skipped=skipped, cost=cost, notes=notes)
