"""Text that may travel (issue 17, rows 5, 6 and 8): NUL, lone surrogates and control
characters are named where they are refused, reads refuse them as writes do, and stored
strings and keys have a length cap."""

from __future__ import annotations

import pytest

from stackgraph import cypher
from stackgraph.errors import InputError
from stackgraph.ingest import GraphIngestor
from stackgraph.rca.graph_query import query_stack_graph
from stackgraph.schema import (
    MAX_KEY_CHARS,
    MAX_PROPERTY_CHARS,
    NodeRecord,
    RecordBatch,
    text_problem,
)
from stackgraph.store import GraphStore


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("checkout", None),
        ("line\nbreak\ttab ünï 漢字 🙂 \u202eevil", None),
        ("checkout\x00x", "contains a NUL character (U+0000) at index 8"),
        ("\ud800", "contains a lone surrogate (U+D800) at index 0"),
        ("bell\x07", "contains a control character (U+0007) at index 4"),
        ("esc\x1b[2J", "contains a control character (U+001B) at index 3"),
        ("c1\x85", "contains a control character (U+0085) at index 2"),
    ],
)
def test_text_problem_names_the_character_and_where(value: str, problem: str | None) -> None:
    assert text_problem(value) == problem


def test_stored_text_may_hold_controls_but_never_nul_or_surrogates() -> None:
    assert text_problem("ansi \x1b[31mred", controls=False) is None
    assert text_problem("a\x00", controls=False) == "contains a NUL character (U+0000) at index 1"
    assert text_problem("x" * 11, 10) == "is 11 characters, over the limit of 10"


@pytest.mark.parametrize("value", ["checkout\x00x", "\ud800", ["ok", "a\x00"]])
def test_reads_refuse_what_falkordb_would_cut_or_the_client_cannot_encode(
    store: GraphStore, value: object
) -> None:
    with pytest.raises(InputError, match=r"query parameter 'name' contains a"):
        store.read(cypher.load("sg_service_exists"), {"name": value})


def test_the_graph_tool_says_refused_not_unavailable(store: GraphStore) -> None:
    answer = query_stack_graph(store, "checkout\x00x")
    assert answer["reason"].startswith("refused: query parameter")
    assert "NUL" in answer["reason"]


def test_the_writer_caps_keys_and_properties(store: GraphStore) -> None:
    long_key = NodeRecord("Service", {"name": "k" * (MAX_KEY_CHARS + 1)})
    long_prop = NodeRecord("Service", {"name": "big"}, {"owner": "x" * (MAX_PROPERTY_CHARS + 1)})
    fine = NodeRecord("Service", {"name": "fine"}, {"owner": "x" * 70_000})
    with GraphIngestor(store) as writer:
        report = writer.write(RecordBatch([long_key, long_prop, fine]))
    messages = {r.field: r.message for r in report.rejected}
    assert messages == {
        "key.name": f"is {MAX_KEY_CHARS + 1} characters, over the limit of {MAX_KEY_CHARS}",
        "owner": f"is {MAX_PROPERTY_CHARS + 1} characters, over the limit of {MAX_PROPERTY_CHARS}",
    }
    assert report.nodes["Service"].created == 1
