"""Benchmark: `investigate` on a platform with no tracing, where the graph links the
alerting service to nothing and the plan takes its namespace (`neighbourhood.unlinked`).

10k services (a Deployment and a k8s Service each, `bench.infra.generate`) are built by the
infra lane and written through the single writer, with no call between them, twice: spread
over 100 namespaces, and all in one (the worst case: every service is a namespace-mate).
For the same sample of anchors we time `investigate(hops=2)` and the raw one-hop template
`rca_onehop` (the reference) and report P50/P95 and their ratios.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from stackgraph.config import load_settings
from stackgraph.ingest import GraphIngestor
from stackgraph.ingest.lanes.infra import build
from stackgraph.store import GraphStore

from .infra import generate
from .investigate import pct, time_plans


def _layout(n_services: int, namespaces: int, samples: int) -> tuple[list[float], list[float], int]:
    """(one-hop ms, investigate ms, candidates of the last plan) on one generated cluster."""
    objects = generate(2 * n_services, namespaces)
    batch = build(objects, [f"object {i}" for i in range(len(objects))])
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(None, data_dir=Path(tmp), graph="bench-unlinked")
        with GraphStore.open(settings) as store:
            with GraphIngestor(store, batch_size=10_000, who="bench") as writer:
                writer.write(batch)
            rng = np.random.default_rng(11)
            anchors = [f"app-{int(i):05d}" for i in rng.integers(0, n_services, samples)]
            raw, inv, plans = time_plans(store, anchors)
            for plan in plans:
                assert any("links" in n and "to nothing" in n for n in plan.notes), plan.notes
            with GraphIngestor(store, who="bench") as writer:
                writer.drop_graph()
    return raw, inv, len(plans[-1].candidates)


def run(quick: bool = False) -> str:
    n_services, samples = (1_000, 40) if quick else (10_000, 200)
    cmd = "python -m stackgraph.bench --only unlinked" + (" --quick" if quick else "")
    lines = [
        "## investigate where the graph links the alerting service to nothing",
        "",
        f"Command: `{cmd}`: {n_services:,} services (Deployment + k8s Service each, the "
        f"infra lane), no calls; {samples} random anchors, hops=2, limit 10 (up to 50 "
        "namespace-mates), no metrics source.",
        "",
        "| layout | raw one-hop P50 / P95 ms | `investigate` P50 / P95 ms | ratio P50 / P95 |",
        "|---|---|---|---|",
    ]
    for label, namespaces in (("100 namespaces", 100), ("one namespace", 1)):
        raw, inv, size = _layout(n_services, namespaces, samples)
        r50, r95, p50, p95 = pct(raw, 50), pct(raw, 95), pct(inv, 50), pct(inv, 95)
        lines.append(
            f"| {label} ({size} candidates) | {r50:.2f} / {r95:.2f} | {p50:.2f} / {p95:.2f} "
            f"| {p50 / r50:.1f}x / {p95 / r95:.1f}x |"
        )
    return "\n".join([*lines, "", "Target: `investigate` P95 <= 50 ms at 10k services.", ""])
