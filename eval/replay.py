"""Replay labelled incidents through the real read path.

Each case is written by the single writer into a graph key of its own (call graph and
edge statistics as CALLS records, releases as Deploy records, infra from the dataset's
manifests when an `infra` lane is registered), an alert is built on the symptom service
(never naming the root cause), and `investigate` ranks with a MetricsSource that serves
the case's own metric series, the same interface Prometheus serves live.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from stackgraph.ingest import LANES, GraphIngestor, LaneInputs
from stackgraph.rca import DEFAULT, Alert, Playbook, investigate
from stackgraph.schema import RecordBatch
from stackgraph.store import GraphStore

from .datasets.model import Case
from .records import DeployEvent, EdgeStat, deploy_records, edge_stat_records


class CaseMetrics:
    """A MetricsSource over one case's series; kinds are `kind/series-name`."""

    def __init__(self, case: Case) -> None:
        self.source_name = f"replay:{case.dataset}"
        self._series: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
        for ms in case.metrics:
            self._series.setdefault(ms.service, {})[f"{ms.kind}/{ms.name}"] = (ms.times, ms.values)

    def kinds(self, service: str) -> Sequence[str]:
        return sorted(self._series.get(service, {}))

    def values(self, service: str, kind: str, start: float, end: float) -> Sequence[float]:
        found = self._series.get(service, {}).get(kind)
        if found is None:
            return []
        times, values = found
        mask = (times >= start) & (times < end) & np.isfinite(values)
        return [float(v) for v in values[mask]]


def case_alert(case: Case) -> Alert:
    """What Alertmanager would send: the symptom service and when it started firing."""
    fp = hashlib.sha256(f"{case.dataset}:{case.case_id}".encode()).hexdigest()[:16]
    return Alert(
        labels={"alertname": "SymptomDetected", "service": case.symptom_service,
                "severity": "critical"},
        annotations={"summary": f"{case.symptom_service} is degraded"},
        starts_at=case.alert_window[0],
        fingerprint=fp,
    )  # fmt: skip


def case_records(case: Case) -> RecordBatch:
    """The case's call graph + statistics and its releases, as records (source Synthetic)."""
    stale = set(getattr(case, "stale_edges", ()))
    stats = [
        EdgeStat(e.client, e.server, e.trace_count, e.error_rate, e.latency_p95_ms,
                 "Stale" if (e.client, e.server) in stale else "Active")
        for e in case.call_edges
    ]  # fmt: skip
    batch = edge_stat_records(stats, origin=f"{case.dataset}:{case.case_id}")
    crit: Mapping[str, str] = getattr(case, "criticality", {})
    from stackgraph.schema import NodeRecord

    for svc in case.services:
        props = {"criticality": crit[svc]} if svc in crit else {}
        batch.nodes.append(NodeRecord("Service", {"name": svc}, props, "Synthetic"))
    batch.extend(deploy_records(DeployEvent(c.service, c.version, c.at) for c in case.changes))
    return batch


@dataclass
class ReplayResult:
    case: Case
    ranking: list[str]
    seconds: float
    reason: str = ""


@dataclass
class Replayer:
    """Replays cases on one FalkorDB connection, one graph key per case (deleted after)."""

    store: GraphStore
    playbook: Playbook = DEFAULT
    manifests_root: Path | None = None
    hops: int = 4
    keep_graphs: bool = False
    notes: list[str] = field(default_factory=list)
    _infra_cache: dict[str, RecordBatch] = field(default_factory=dict)

    def infra(self, case: Case, settings: Any) -> RecordBatch:
        if not case.manifests or self.manifests_root is None:
            return RecordBatch()
        lane = LANES.get("infra")
        if lane is None:
            note = "infra lane not available: manifests not ingested (call graph only)"
            if note not in self.notes:
                self.notes.append(note)
            return RecordBatch()
        if case.manifests not in self._infra_cache:
            folder = self.manifests_root / case.manifests
            self._infra_cache[case.manifests] = lane.collect(LaneInputs(settings, manifests=folder))
        return self._infra_cache[case.manifests]

    def run(self, case: Case, index: int, settings: Any = None) -> ReplayResult:
        key = f"{self.store.graph_name}-eval-{index}"
        graph = GraphStore(self.store.conn, key, self.store.where)
        try:
            batch = RecordBatch()
            batch.extend(self.infra(case, settings))
            batch.extend(case_records(case))
            with GraphIngestor(graph, who="eval") as writer:
                writer.write(batch)
            start = time.perf_counter()
            plan = investigate(graph, case_alert(case), at=case.alert_window[1],
                               metrics=CaseMetrics(case), hops=self.hops,
                               limit=len(case.services) + 10, playbook=self.playbook,
                               baseline=case.baseline_window)  # fmt: skip
            seconds = time.perf_counter() - start
        finally:
            if not self.keep_graphs:
                graph.delete()
                self.store.conn.delete(f"stackgraph:{key}:writer-lease")
        ranked = [c.service for c in plan.candidates if c.service in case.services]
        ranked += sorted(s for s in case.services if s not in ranked)
        return ReplayResult(case, ranked, seconds, plan.reason)


Method = Callable[[Case], list[str]]


def run_methods(
    cases: Sequence[Case],
    replayer: Replayer,
    baselines: Mapping[str, Method],
    settings: Any = None,
) -> tuple[dict[str, list[list[str]]], dict[str, list[float]], list[str]]:
    """Rank every case with StackGraph and each baseline; rankings and seconds per case."""
    ranks: dict[str, list[list[str]]] = {"stackgraph": []}
    secs: dict[str, list[float]] = {"stackgraph": []}
    skipped: list[str] = []
    for i, case in enumerate(cases):
        res = replayer.run(case, i, settings)
        ranks["stackgraph"].append(res.ranking)
        secs["stackgraph"].append(res.seconds)
    for name, fn in baselines.items():
        out, took = [], []
        try:
            for case in cases:
                t = time.perf_counter()
                out.append(fn(case))
                took.append(time.perf_counter() - t)
        except ImportError as exc:
            skipped.append(f"{name}: {exc}")
            continue
        ranks[name], secs[name] = out, took
    return ranks, secs, skipped
