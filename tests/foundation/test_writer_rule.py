"""Only the writer writes: lanes get a read-only port, every write in the product goes
through `GraphIngestor` under its lease, and memory writes are validated like records."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from sgtest import REPO

from stackgraph import cypher
from stackgraph.config import Settings
from stackgraph.errors import InputError
from stackgraph.ingest import (
    LANES,
    GraphIngestor,
    LaneInputs,
    ensure_vector_index,
    expire_episode,
    register,
    run_lanes,
    write_vectors,
)
from stackgraph.schema import RecordBatch
from stackgraph.store import GraphReader, GraphStore

PACKAGE_DIRS = ("stackgraph", "schema", "cypher", "ingest", "rca", "memory", "eval")
WRITER = Path("ingest/writer.py")


@pytest.fixture
def spy_lane() -> Iterator[list[LaneInputs]]:
    seen: list[LaneInputs] = []

    @register("spy", "records what a lane is given")
    def collect(inputs: LaneInputs) -> RecordBatch:
        seen.append(inputs)
        return RecordBatch()

    yield seen
    LANES.pop("spy", None)


def test_lanes_get_a_port_that_has_no_way_to_write(
    settings: Settings, store: GraphStore, spy_lane: list[LaneInputs]
) -> None:
    run_lanes(store, settings, "spy")
    (inputs,) = spy_lane
    port = inputs.graph
    assert type(port) is GraphReader  # not the store itself
    public = {name for name in dir(port) if not name.startswith("_")}
    assert public == {"exists", "graph_name", "read", "timeout_ms", "where"}
    assert port.read(cypher.load("lane_service_names")) == []


def _write_calls(path: Path) -> list[str]:
    """Calls that pass the writer lease (`lease=`): store writes and drops."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and any(k.arg == "lease" for k in node.keywords)
    ]


def test_only_the_writer_sends_writes_to_the_store() -> None:
    found = [
        call
        for folder in PACKAGE_DIRS
        for path in sorted((REPO / folder).rglob("*.py"))
        for call in _write_calls(path.relative_to(REPO))
        if Path(call.split(":")[0]) != WRITER
    ]
    assert found == []
    assert len(_write_calls(WRITER)) == 3  # GraphIngestor._write, drop_graph, copy_graph


def test_memory_writes_are_validated_before_anything_is_written(store: GraphStore) -> None:
    with GraphIngestor(store) as writer:
        ensure_vector_index(writer, 4, "tiny")
        with pytest.raises(InputError, match="incident_fingerprint: is empty"):
            write_vectors(writer, [("", 1, [1.0, 0.0, 0.0, 0.0])], 4, "tiny")
        with pytest.raises(InputError, match="version must be an integer"):
            write_vectors(writer, [("fp", 1.5, [1.0, 0.0, 0.0, 0.0])], 4, "tiny")
        with pytest.raises(InputError, match="NUL"):
            write_vectors(writer, [("fp", 1, [1.0, 0.0, 0.0, 0.0])], 4, "ti\x00ny")
        with pytest.raises(InputError, match="version must be an integer"):
            expire_episode(writer, "fp", "1", 5.0)  # type: ignore[arg-type]
        with pytest.raises(InputError, match="finite"):
            expire_episode(writer, "fp", 1, float("nan"))
    count = cypher.Query(
        "MATCH (e:MemoryEpisode) WHERE e.embedding IS NOT NULL RETURN count(e) AS n"
    )
    assert store.read(count) in ([], [{"n": 0}])
