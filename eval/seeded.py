"""The self-seeded incident set: a regression sentinel with a distractor arm, not evidence.

Topologies and incidents are YAML under `eval/data/seeded/`; telemetry is generated
deterministically (RNG seeded by the incident id): the root cause's own metric moves with
its fault, its callers see latency (and errors) decaying with distance, the edges into it
carry errors. Distractors: healthy critical services, a red-herring deploy just before the
alert, a Stale edge with a high (old) error rate into a healthy service.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from .datasets.model import CallEdge, Case, ChangeEvent, DatasetError, MetricSeries

NAME = "seeded"
DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "seeded"
T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
STEP = 60.0
BASELINE_POINTS, ALERT_POINTS = 20, 10
LEVEL = {"cpu": 30.0, "memory": 40.0, "latency": 50.0, "errors": 0.5, "workload": 100.0}


@dataclass(frozen=True)
class SeededCase(Case):
    """A Case that also carries catalog criticality and the edges observed as Stale."""

    criticality: Mapping[str, str] = field(default_factory=dict)
    stale_edges: tuple[tuple[str, str], ...] = ()


def _rng(case_id: str) -> np.random.Generator:
    return np.random.default_rng(int.from_bytes(hashlib.sha256(case_id.encode()).digest()[:8]))


def _distances_to(root: str, calls: Mapping[str, list[str]]) -> dict[str, int]:
    """Hops from each service that (transitively) calls `root` down to it."""
    callers: dict[str, list[str]] = {}
    for c, callees in calls.items():
        for s in callees:
            callers.setdefault(s, []).append(c)
    dist = {root: 0}
    queue = deque([root])
    while queue:
        n = queue.popleft()
        for c in callers.get(n, []):
            if c not in dist:
                dist[c] = dist[n] + 1
                queue.append(c)
    return dist


def _incident(topo: Mapping[str, Any], inc: Mapping[str, Any], index: int) -> SeededCase:
    cid, root, fault = str(inc["id"]), str(inc["root"]), str(inc["fault"])
    calls: dict[str, list[str]] = {k: list(v) for k, v in topo["calls"].items()}
    services = sorted({*calls, *(s for v in calls.values() for s in v)})
    if root not in services:
        raise DatasetError(f"seeded incident {cid}: root {root!r} is not in its topology")
    rng = _rng(cid)
    t0 = T0 + index * 7200.0
    bt = t0 - STEP * np.arange(BASELINE_POINTS, 0, -1)
    at = t0 + STEP * np.arange(ALERT_POINTS)
    times = np.concatenate([bt, at])
    dist = _distances_to(root, calls)
    metrics: list[MetricSeries] = []
    alert_latency: dict[str, float] = {}
    for svc in services:
        d = dist.get(svc)
        for kind, level in LEVEL.items():
            base = level * (1 + 0.04 * rng.standard_normal(BASELINE_POINTS))
            mult, add = 1.0, 0.0
            if svc == root:
                mult = {"cpu": {"cpu": 2.5, "latency": 1.6}, "memory": {"memory": 1.8,
                        "latency": 1.3}, "latency": {"latency": 4.0},
                        "errors": {"latency": 1.2}}[fault].get(kind, 1.0)  # fmt: skip
                add = 15.0 if (fault == "errors" and kind == "errors") else 0.0
            elif d is not None:
                if kind == "latency":
                    mult = 1 + 0.8 * 0.7**d
                if kind == "errors" and fault == "errors":
                    add = 6.0 * 0.6**d
            if svc == inc.get("red_herring") and kind == "workload":
                mult = 1.3  # the redeployed service restarts: traffic shifts a little
            alert = level * mult * (1 + 0.04 * rng.standard_normal(ALERT_POINTS)) + add
            if kind == "latency":
                alert_latency[svc] = float(np.median(alert))
            metrics.append(MetricSeries(svc, kind, kind, times, np.concatenate([base, alert])))
    edges: list[CallEdge] = []
    stale_pair = tuple(inc["stale_error"]) if inc.get("stale_error") else None
    for c, callees in sorted(calls.items()):
        for s in callees:
            err = 0.002
            ds = dist.get(s)
            if s == root:
                err = 0.10 if fault == "errors" else 0.02
            elif ds is not None and fault == "errors":
                err = 0.10 * 0.6**ds
            if (c, s) == stale_pair:
                err = 0.30
            edges.append(CallEdge(c, s, 1000.0, err, alert_latency.get(s)))
    changes = []
    if inc.get("red_herring"):
        changes.append(ChangeEvent(str(inc["red_herring"]), "v2-red-herring", t0 - 300.0))
    if inc.get("deploy"):
        changes.append(ChangeEvent(root, "v2", t0 - 600.0))
    return SeededCase(
        dataset=NAME, case_id=cid, fault_type=fault, root_cause=root, inject_time=t0,
        alert_window=(t0, t0 + ALERT_POINTS * STEP),
        baseline_window=(t0 - BASELINE_POINTS * STEP, t0),
        symptom_service=str(topo["symptom"]), services=tuple(services),
        call_edges=tuple(edges), metrics=tuple(metrics), changes=tuple(changes),
        manifests=None, criticality=dict(topo.get("criticality", {})),
        stale_edges=(stale_pair,) if stale_pair else (),
    )  # fmt: skip


def load_seeded(path: Path = DEFAULT_PATH) -> list[Case]:
    """The seeded incidents under `path` (topologies.yaml + incidents.yaml)."""
    try:
        topos = yaml.safe_load((path / "topologies.yaml").read_text(encoding="utf-8"))
        incidents = yaml.safe_load((path / "incidents.yaml").read_text(encoding="utf-8"))
    except OSError as exc:
        raise DatasetError(f"seeded set: cannot read {path}: {exc.strerror}") from exc
    out: list[Case] = []
    for i, inc in enumerate(incidents or []):
        topo = topos.get(inc.get("topology"))
        if topo is None:
            raise DatasetError(f"seeded incident {inc.get('id')}: unknown topology")
        out.append(_incident(topo, inc, i))
    return out
