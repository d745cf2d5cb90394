"""The self-seeded incident set: a regression sentinel with a distractor arm, not evidence.

Topologies and incidents are YAML under `eval/data/seeded/`; telemetry is generated
deterministically (RNG seeded by the incident id) in the exporters' terms of
`datasets.model`, on a 1-minute grid: a 30-minute baseline before the fault and a
10-minute alert window from it (a value at `t` covers the minute ending at `t`, so the
fault shows from `t0 + 60`).

* Per service (pods): `cpu` (cores), `memory` (bytes), `network_rx`/`network_tx` (bytes/s,
  proportional to the requests it serves).
* Per call edge: `requests` (req/s, flowing down from the entry's rate), and the callee's
  own `latency_server` (p95 s) and `errors` (share) on each of its incoming edges
  (`datasets._common.spread_to_callers`), with `latency_client` a little above it (the
  network). The entry service's caller is `user`, so the edge user -> symptom carries the
  symptom's own latency and errors: that is where an alert can be found.
* The fault: the root cause's own signal moves (cpu x2.5, memory x1.8, latency x4, or
  errors 12% on the edges into it), its latency rises too, and every service that calls
  it, directly or not, sees latency (and, for `errors` faults, errors) decaying with the
  distance in hops.

Distractors: healthy critical services (`Case.criticality` from the topology), a
red-herring deploy 5 minutes before the fault (its traffic and cpu step up a little), and
`stale_error`: an edge whose series, with a 30% error rate, stop 16 minutes before the
fault, so a telemetry lane run during the baseline sees it and marks it Stale later.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Mapping
from dataclasses import replace
from graphlib import TopologicalSorter
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from .datasets._common import callers_of, spread_to_callers
from .datasets.model import USER, CallEdge, Case, ChangeEvent, DatasetError, MetricSeries, series

NAME = "seeded"
DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "seeded"
T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
STEP = 60.0
BASELINE_POINTS, ALERT_POINTS = 30, 10
STALE_BEFORE_S = 16 * 60.0  # a stale edge's last point is this long before the fault
ENTRY_RATE = 40.0  # req/s from the users into the symptom
RED_HERRING_AT_S = 300.0
DEPLOY_AT_S = 600.0
ROOT_EFFECT: Mapping[str, Mapping[str, float]] = {
    "cpu": {"cpu": 2.5, "latency": 1.6},
    "memory": {"memory": 1.8, "latency": 1.3},
    "latency": {"latency": 4.0},
    "errors": {"latency": 1.2},
}
ROOT_ERRORS = {"errors": 0.12}  # error share on the edges into the root; else 0.02
BASE_ERRORS = 0.002


def _rng(case_id: str) -> np.random.Generator:
    return np.random.default_rng(int.from_bytes(hashlib.sha256(case_id.encode()).digest()[:8]))


def _distances_to(root: str, edges: list[tuple[str, str]]) -> dict[str, int]:
    """Hops from each service that (transitively) calls `root` down to it."""
    callers: dict[str, list[str]] = {}
    for c, s in edges:
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


def _incident(topo: Mapping[str, Any], inc: Mapping[str, Any], index: int) -> Case:
    cid, root, fault = str(inc["id"]), str(inc["root"]), str(inc["fault"])
    calls: dict[str, list[str]] = {k: list(v) for k, v in topo["calls"].items()}
    edges = sorted((c, s) for c, callees in calls.items() for s in callees)
    services = sorted({*calls, *(s for _, s in edges)})
    symptom = str(topo["symptom"])
    if root not in services or symptom not in services:
        raise DatasetError(f"seeded incident {cid}: root or symptom is not in its topology")
    if fault not in ROOT_EFFECT:
        raise DatasetError(f"seeded incident {cid}: unknown fault {fault!r}")
    stale = tuple(inc["stale_error"]) if inc.get("stale_error") else None
    if stale is not None and stale not in edges:
        raise DatasetError(f"seeded incident {cid}: stale edge {stale} is not a call")
    herring = inc.get("red_herring")
    rng = _rng(cid)
    t0 = T0 + index * 7200.0
    times = t0 + STEP * np.arange(-BASELINE_POINTS, ALERT_POINTS, dtype=np.float64)
    faulty = times > t0
    n = times.size
    dist = _distances_to(root, edges)

    def noisy(level: float | np.ndarray, rel: float = 0.04) -> np.ndarray:
        return np.asarray(level, dtype=np.float64) * (1.0 + rel * rng.standard_normal(n))

    def step(mult: float, when: np.ndarray) -> np.ndarray:
        return np.where(when, mult, 1.0)

    herring_on = times > t0 - RED_HERRING_AT_S
    # Traffic flows down from the users: each call carries a share of its caller's load.
    rate: dict[str, float] = {symptom: ENTRY_RATE}
    edge_rate: dict[tuple[str, str], float] = {}
    order = TopologicalSorter({s: [c for c, x in edges if x == s] for s in services})
    for svc in order.static_order():
        for c, s in edges:
            if c == svc:
                edge_rate[(c, s)] = rate.get(c, 0.0) * float(rng.uniform(0.3, 1.0))
                rate[s] = rate.get(s, 0.0) + edge_rate[(c, s)]
    own_latency = {s: float(rng.uniform(0.01, 0.06)) for s in services}

    def latency_base(s: str) -> float:  # p95 includes part of what it waits for
        return own_latency[s] + 0.5 * sum(latency_base(x) for c, x in edges if c == s)

    metrics: list[MetricSeries] = []
    for svc in services:
        d = dist.get(svc)
        effect = ROOT_EFFECT[fault] if svc == root else {}
        redeployed = herring_on & (svc == herring)
        load = step(1.3, redeployed)  # the redeployed service's traffic shifts a little
        cpu = noisy(float(rng.uniform(0.05, 0.3))) * step(1.15, redeployed)
        cpu *= step(effect.get("cpu", 1.0), faulty)
        memory = noisy(float(rng.uniform(128, 512)) * 2**20, 0.01)
        memory *= step(effect.get("memory", 1.0), faulty)
        in_rate = noisy(rate.get(svc, 0.0)) * load
        metrics += [
            series(svc, "cpu", times, cpu),
            series(svc, "memory", times, memory),
            series(svc, "network_rx", times, in_rate * 1500.0),
            series(svc, "network_tx", times, noisy(in_rate * 6000.0)),
        ]
        lat_mult = effect.get("latency", 1.0) if svc == root else 1.0
        if d is not None and d > 0:
            lat_mult = 1.0 + 0.8 * 0.7**d
        latency = noisy(latency_base(svc)) * step(lat_mult, faulty)
        err_level = BASE_ERRORS
        if svc == root:
            err_level = ROOT_ERRORS.get(fault, 0.02)
        elif d is not None and fault == "errors":
            err_level = ROOT_ERRORS["errors"] * 0.6**d
        errors = np.where(faulty, err_level, BASE_ERRORS) * (1.0 + 0.1 * rng.standard_normal(n))
        errors = np.clip(errors, 0.0, 1.0)
        metrics += spread_to_callers(svc, edges, times, errors=errors, latency_server=latency)
        for caller in callers_of(svc, edges):
            share = ENTRY_RATE if caller == USER else edge_rate[(caller, svc)]
            metrics += [
                series(svc, "requests", times, noisy(share) * load, client=caller),
                series(svc, "latency_client", times, latency + noisy(0.002, 0.2), client=caller),
            ]
    if stale is not None:
        metrics = [_stale(m, stale, t0, rng) for m in metrics]
    changes = []
    if herring:
        changes.append(ChangeEvent(str(herring), "v2-red-herring", t0 - RED_HERRING_AT_S))
    if inc.get("deploy"):
        changes.append(ChangeEvent(root, "v2", t0 - DEPLOY_AT_S))
    return Case(
        dataset=NAME,
        case_id=cid,
        fault_type=fault,
        root_cause=root,
        inject_time=t0,
        alert_window=(t0, t0 + ALERT_POINTS * STEP),
        baseline_window=(t0 - BASELINE_POINTS * STEP, t0),
        symptom_service=symptom,
        services=tuple(services),
        call_edges=tuple(CallEdge(c, s) for c, s in edges),
        metrics=tuple(metrics),
        changes=tuple(sorted(changes, key=lambda c: c.at)),
        manifests=None,
        timeline=cid,
        criticality=dict(topo.get("criticality", {})),
    )


def _stale(
    m: MetricSeries, edge: tuple[str, str], t0: float, rng: np.random.Generator
) -> MetricSeries:
    """The stale edge's series end STALE_BEFORE_S before the fault, errors at ~30%."""
    if (m.client, m.service) != edge:
        return m
    keep = m.times <= t0 - STALE_BEFORE_S
    values = m.values[keep]
    if m.name == "errors":
        values = np.clip(0.30 + 0.02 * rng.standard_normal(values.size), 0.0, 1.0)
    return replace(m, times=m.times[keep], values=values)


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
