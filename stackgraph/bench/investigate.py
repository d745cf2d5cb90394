"""Benchmark: `investigate` latency on a generated graph vs a raw one-hop query.

A random service graph (10k services, 100k CALLS edges with telemetry, a few hundred
deploys) is written through the single writer into a scratch graph key of an embedded
FalkorDB. Then, for the same sample of anchors, we time `investigate(hops=2)`, its read
part alone (anchor lookup + the playbook's generators, no scoring) and the raw one-hop
template `rca_onehop`, and report P50/P95 and their ratios.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from stackgraph import cypher
from stackgraph.config import load_settings
from stackgraph.eval.records import DeployEvent, deploy_records, edge_stat_records
from stackgraph.ingest import GraphIngestor
from stackgraph.ingest.lanes.telemetry import EdgeStat
from stackgraph.rca import Alert, Plan, investigate
from stackgraph.rca.anchor import resolve_anchor
from stackgraph.rca.collect import GENERATORS
from stackgraph.rca.facts import Facts, Request
from stackgraph.rca.windows import windows_for
from stackgraph.store import GraphStore

T0 = 1_800_000_000.0


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def generate(
    n_services: int, n_edges: int, seed: int = 7
) -> tuple[list[EdgeStat], list[DeployEvent]]:
    rng = np.random.default_rng(seed)
    names = [f"svc-{i:05d}" for i in range(n_services)]
    seen: set[tuple[int, int]] = set()
    edges: list[EdgeStat] = []
    while len(edges) < n_edges:
        a, b = (int(x) for x in rng.integers(0, n_services, 2))
        if a == b or (a, b) in seen:
            continue
        seen.add((a, b))
        err = float(rng.beta(0.5, 40.0))
        edges.append(
            EdgeStat(
                names[a],
                names[b],
                float(rng.integers(10, 10_000)),
                err,
                float(rng.gamma(2.0, 40.0)),
            )
        )
    deploys = [
        DeployEvent(names[int(i)], f"v{k}", T0 - float(rng.integers(0, 7200)))
        for k, i in enumerate(rng.integers(0, n_services, max(10, n_services // 30)))
    ]
    return edges, deploys


def read_part(store: GraphStore, alert: Alert, at: float) -> int:
    """What `investigate` reads from the store (anchor + generators), without scoring."""
    win = windows_for(alert, at)
    anchor, why = resolve_anchor(store, alert)
    assert anchor is not None, why
    facts = Facts(anchor=anchor.name, nodes={anchor.name: anchor}, windows=win)
    req = Request(alert, win, 2, 10, None)
    for generate in GENERATORS.values():  # the default program's generators, in its order
        facts = generate(store, req, facts)
    return len(facts.nodes)


def time_plans(
    store: GraphStore, anchors: list[str]
) -> tuple[list[float], list[float], list[Plan]]:
    """Per anchor, the raw one-hop template (the reference) and `investigate(hops=2)` in ms,
    and the plans; the query cache warmed on the first five."""
    onehop = cypher.load("rca_onehop")
    for a in anchors[:5]:
        store.read(onehop, {"anchor": a, "limit": 1000})
        investigate(store, Alert({"service": a}, starts_at=T0), at=T0 + 600)
    raw: list[float] = []
    inv: list[float] = []
    plans: list[Plan] = []
    for a in anchors:
        t = time.perf_counter()
        store.read(onehop, {"anchor": a, "limit": 1000})
        raw.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        plan = investigate(store, Alert({"service": a}, starts_at=T0), at=T0 + 600)
        inv.append((time.perf_counter() - t) * 1000)
        assert plan.anchor == a, plan.reason
        plans.append(plan)
    return raw, inv, plans


def run(quick: bool = False) -> str:
    n_services, n_edges, samples = (1_000, 10_000, 40) if quick else (10_000, 100_000, 200)
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(None, data_dir=Path(tmp), graph="bench-investigate")
        with GraphStore.open(settings) as store:
            edges, deploys = generate(n_services, n_edges)
            batch = edge_stat_records(edges)
            batch.extend(deploy_records(deploys))
            t = time.perf_counter()
            with GraphIngestor(store, batch_size=10_000, who="bench") as writer:
                writer.write(batch)
            load_s = time.perf_counter() - t
            rng = np.random.default_rng(11)
            anchors = [f"svc-{int(i):05d}" for i in rng.integers(0, n_services, samples)]
            raw, inv, plans = time_plans(store, anchors)
            sizes = [len(plan.candidates) for plan in plans]
            reads: list[float] = []
            hood: list[int] = []
            for a in anchors:
                t = time.perf_counter()
                hood.append(read_part(store, Alert({"service": a}, starts_at=T0), T0 + 600))
                reads.append((time.perf_counter() - t) * 1000)
            with GraphIngestor(store, who="bench") as writer:
                writer.drop_graph()
    p50, p95 = pct(inv, 50), pct(inv, 95)
    r50, r95 = pct(raw, 50), pct(raw, 95)
    g50, g95 = pct(reads, 50), pct(reads, 95)
    return "\n".join(
        [
            "## investigate (read path)",
            "",
            "`make bench` (or `.venv/bin/python -m stackgraph.bench --only investigate`"
            f"{' --quick' if quick else ''}): {n_services:,} services, {n_edges:,} CALLS edges "
            f"with telemetry, {len(deploys)} deploys, written through the writer in "
            f"{load_s:.1f} s; {samples} random anchors, hops=2, limit 10, no metrics source.",
            "",
            "| query | P50 ms | P95 ms |",
            "|---|---|---|",
            f"| raw one-hop (`rca_onehop`) | {r50:.2f} | {r95:.2f} |",
            f"| `investigate` (anchor, 2-hop paths, callers, deploys, history, scoring) "
            f"| {p50:.2f} | {p95:.2f} |",
            f"| its store reads alone (anchor + generators, no scoring) | {g50:.2f} | {g95:.2f} |",
            "",
            f"Ratio investigate / one-hop: P50 {p50 / r50:.1f}x, P95 {p95 / r95:.1f}x "
            f"(target P95 <= 50 ms and ratio <= 3); store reads / one-hop: P50 "
            f"{g50 / r50:.1f}x, P95 {g95 / r95:.1f}x. Mean neighbourhood "
            f"{statistics.mean(hood):.0f} nodes, candidates per plan {statistics.mean(sizes):.1f}.",
            "",
        ]
    )
