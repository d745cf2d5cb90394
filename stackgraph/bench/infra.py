"""Infra lane benchmark: selector matching stays near-linear within one namespace.

The same generated objects (half Deployments, half k8s Services each selecting one of
them, with shared labels such as `part-of` and `tier` on every pod) are built into records
twice in one run: all in one namespace, and spread over 100 namespaces (the reference,
where no namespace is large). Near-linear matching makes the ratio about 1; the old
pairwise comparison grew with the square of a namespace's size. A quarter-size run in one
namespace gives the growth: 4x the objects should cost about 4x the time.
"""

from __future__ import annotations

import time
from typing import Any

from stackgraph.ingest.lanes.infra import build

TIERS = ("web", "api", "worker", "db")


def generate(n_objects: int, namespaces: int) -> list[dict[str, Any]]:
    """`n_objects` k8s objects: Deployment i and Service i (selecting it) in namespace
    i % `namespaces`."""
    out: list[dict[str, Any]] = []
    for i in range(n_objects // 2):
        ns = f"ns-{i % namespaces:03d}"
        app = f"app-{i:05d}"
        pod = {"app": app, "app.kubernetes.io/part-of": "shop", "tier": TIERS[i % 4]}
        out.append({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": app, "namespace": ns, "labels": {"app": app}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": app}},
                     "template": {"metadata": {"labels": pod},
                                  "spec": {"containers": [{"name": "main",
                                                           "image": f"shop/{app}:1.0"}]}}},
        })  # fmt: skip
        out.append({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": app, "namespace": ns},
            "spec": {"selector": {"app.kubernetes.io/part-of": "shop", "app": app},
                     "ports": [{"port": 8080}]},
        })  # fmt: skip
    return out


def _time(objects: list[dict[str, Any]]) -> tuple[float, int]:
    origins = [f"object {i}" for i in range(len(objects))]
    t0 = time.perf_counter()
    batch = build(objects, origins)
    elapsed = time.perf_counter() - t0
    assert not batch.problems, batch.problems[:3]
    return elapsed, len(batch.nodes) + len(batch.edges)


def run(quick: bool = False) -> str:
    n = 2_048 if quick else 10_240
    one, records = _time(generate(n, 1))
    spread, spread_records = _time(generate(n, 100))
    quarter, quarter_records = _time(generate(n // 4, 1))
    cmd = "python -m stackgraph.bench --only infra" + (" --quick" if quick else "")
    return "\n".join([
        f"## Infra lane: {n:,} objects, selector matching",
        "",
        f"Command: `{cmd}` (in process: `build(objects)`, no parsing, no writing).",
        "",
        "| layout | objects | records | seconds | ratio |",
        "|---|---|---|---|---|",
        f"| 100 namespaces (reference) | {n:,} | {spread_records:,} | {spread:.2f} | 1 |",
        f"| one namespace | {n:,} | {records:,} | {one:.2f} | **{one / spread:.2f}x** "
        "the reference |",
        f"| one namespace, a quarter of the objects | {n // 4:,} | {quarter_records:,} | "
        f"{quarter:.2f} | "
        f"4x the objects take **{one / quarter:.1f}x** the time |",
        "",
    ])  # fmt: skip
