"""Selector matching by index finds exactly what comparing every pair finds."""

from __future__ import annotations

import random

from stackgraph.ingest.lanes.infra import build
from stackgraph.ingest.lanes.selectors import match_selectors, selects


def test_index_matches_the_pairwise_comparison() -> None:
    rng = random.Random(3)
    keys, values = ("app", "tier", "part-of", "version"), ("a", "b", "c", "")
    pods = [
        (i, {k: rng.choice(values) for k in rng.sample(keys, rng.randint(0, 4))})
        for i in range(300)
    ]
    services = [
        (f"s{j}", {k: rng.choice(values) for k in rng.sample(keys, rng.randint(0, 3))})
        for j in range(200)
    ]
    found = match_selectors(services, pods)
    expected = {i: [s for s, sel in services if selects(sel, labels)] for i, labels in pods}
    assert found == expected
    assert sum(map(len, found.values())) > 100  # the sample does select things


def test_a_big_namespace_resolves_each_workload_to_its_service() -> None:
    objects = []
    for i in range(500):
        pod = {"app": f"a{i}", "part-of": "shop"}  # every pod shares `part-of`
        objects.append({"apiVersion": "apps/v1", "kind": "Deployment",
                        "metadata": {"name": f"d{i}", "namespace": "big"},
                        "spec": {"template": {"metadata": {"labels": pod}}}})  # fmt: skip
        objects.append({"apiVersion": "v1", "kind": "Service",
                        "metadata": {"name": f"svc{i}", "namespace": "big"},
                        "spec": {"selector": {"part-of": "shop", "app": f"a{i}"}}})  # fmt: skip
    batch = build(objects)
    units = {e.src.key["name"]: e.dst.key["name"] for e in batch.edges if e.type == "DEPLOYED_AS"}
    assert units == {f"svc{i}": f"d{i}" for i in range(500)}
