"""The world-model as it was: first_seen, stale_at and revived_at answer `at` queries."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from stackgraph import cypher
from stackgraph.errors import InputError
from stackgraph.ingest import GraphIngestor
from stackgraph.ingest.lanes.catalog import build, load_catalog
from stackgraph.rca.clock import parse_time, require_time
from stackgraph.store import GraphStore
from stackgraph.timetravel import neighbours_at, visible_nodes


def names(store: GraphStore, at: float | None) -> set[str]:
    return {p["name"] for p in visible_nodes(store, "Service", at)}


def test_graph_as_it_was_across_stale_and_revival(store: GraphStore, examples: Path) -> None:
    path = examples / "platform" / "catalog.yaml"
    full = build(load_catalog(path))
    data = yaml.safe_load(path.read_text())
    data["services"] = [s for s in data["services"] if s["name"] != "recommendation"]
    data["services"][0]["calls"].remove("recommendation")
    smaller = examples / "smaller.yaml"
    smaller.write_text(yaml.safe_dump(data))
    t = {"now": 100.0}
    with GraphIngestor(store, clock=lambda: t["now"]) as writer:
        writer.write(full)
        t["now"] = 200.0
        writer.write(build(load_catalog(smaller)))
        assert writer.mark_stale(source="StaticInfra", cutoff=200.0, label="Service") == 1
        assert writer.mark_stale(source="StaticInfra", cutoff=200.0, edge_type="CALLS") >= 1
        t["now"] = 300.0
        writer.write(full)

    assert names(store, 50.0) == set()
    assert "recommendation" in names(store, 150.0)
    assert "recommendation" not in names(store, 250.0)
    assert "checkout" in names(store, 250.0)
    assert "recommendation" in names(store, 350.0)
    assert names(store, None) == names(store, 350.0)
    (rec,) = [
        r["p"] for r in store.read(cypher.render("asof_nodes", label="Service"),
                                   {"at": None, "limit": 100})
        if r["p"]["name"] == "recommendation"
    ]  # fmt: skip
    assert rec["stale_at"] == [200.0] and rec["revived_at"] == [300.0]
    front = {n for _, _, n in neighbours_at(store, "frontend", 250.0)}
    assert "recommendation" not in front and "checkout" in front
    assert "recommendation" in {n for _, _, n in neighbours_at(store, "frontend", 150.0)}


def test_predicate_is_inlined_once_per_variable() -> None:
    text = cypher.load("asof_neighbours")
    assert "<<" not in text
    assert text.count("s.first_seen <= $at") == 1 and text.count("e.stale_at") == 2


def test_one_time_reader() -> None:
    """Epoch seconds (or milliseconds), ISO 8601 with or without a zone, and Kubernetes'
    RFC 3339 with nanoseconds all read; what a person typed wrong is named."""
    for text in ("1700000000", "1700000000000", "2023-11-14T22:13:20Z", "2023-11-14T22:13:20",
                 "2023-11-14T23:13:20+01:00", "2023-11-14T22:13:20.000000000Z"):  # fmt: skip
        assert require_time(text) == 1_700_000_000.0, text
    assert parse_time("2023-11-14T22:13:20.123456789Z") == pytest.approx(1_700_000_000.123456)
    assert parse_time("yesterday") is None and parse_time("") is None
    assert parse_time(float("inf")) is None and parse_time(True) is None
    with pytest.raises(InputError, match="--at: 'yesterday' is neither"):
        require_time("yesterday", "--at")
