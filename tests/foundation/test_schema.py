"""Validation rejects bad records with the record and the field named."""

from __future__ import annotations

import pytest

from stackgraph import cypher
from stackgraph.schema import (
    EDGES,
    LABELS,
    EdgeRecord,
    NodeRecord,
    NodeRef,
    validate_edge,
    validate_node,
)


def svc(name: str, **props: object) -> NodeRecord:
    return NodeRecord("Service", {"name": name}, props, "StaticInfra")


def test_valid_node_passes() -> None:
    assert validate_node(svc("checkout", criticality="high", tier=1, tags=["a", "b"])) == []


@pytest.mark.parametrize(
    ("record", "field", "words"),
    [
        (NodeRecord("Servce", {"name": "x"}), "label", "unknown label 'Servce'"),
        (NodeRecord("Endpoint", {"service": "x", "method": "GET"}), "key.route", "missing"),
        (NodeRecord("Service", {"name": ""}), "key.name", "empty"),
        (svc("x", criticality="urgent"), "criticality", "'urgent' is not one of"),
        (NodeRecord("Service", {"name": "x"}, source="Guess"), "source", "'Guess'"),
        (NodeRecord("Service", {"name": "x"}, status="Gone"), "status", "'Gone'"),
        (NodeRecord("Service", {"name": "x"}, confidence=1.5), "confidence", "not in [0, 1]"),
        (svc("x", last_seen=1.0), "last_seen", "owned by the writer"),
        (svc("x", nested={"a": 1}), "nested", "unsupported type dict"),
        (svc("x", bad="a\x00b"), "bad", "NUL"),
        (svc("x", mixed=[1, "a"]), "mixed", "mixed types"),
        (svc("x", nan=float("nan")), "nan", "finite"),
        (NodeRecord("Hypothesis", {"incident_fingerprint": "f", "suspect_ref": "s"}),
         "state", "required"),
    ],
)  # fmt: skip
def test_invalid_node_names_record_and_field(record: NodeRecord, field: str, words: str) -> None:
    problems = validate_node(record)
    assert problems, f"{record} should be rejected"
    assert any(p.field == field and words in p.message for p in problems), problems
    assert all(str(record) == p.record for p in problems)


def test_edge_between_disallowed_labels_is_rejected() -> None:
    edge = EdgeRecord("RUNS_ON", NodeRef("Service", {"name": "a"}), NodeRef("Node", {"name": "n1"}))
    (problem,) = validate_edge(edge)
    assert problem.field == "type" and "may not go from Service to Node" in problem.message


def test_edge_unknown_type_and_missing_key() -> None:
    bad_type = EdgeRecord("CALLZ", NodeRef("Service", {"name": "a"}), NodeRef("Service", {}))
    assert validate_edge(bad_type)[0].field == "type"
    missing = EdgeRecord("CALLS", NodeRef("Service", {"name": "a"}), NodeRef("Service", {}))
    assert [p.field for p in validate_edge(missing)] == ["dst.name"]


def test_every_label_and_edge_renders_every_template() -> None:
    for label in LABELS:
        for name in ("node_touch", "node_merge", "node_merge_one", "export_nodes"):
            text = cypher.render(name, label=label, tag="Tempo")
            assert "<<" not in text and f":{label}" in text
    for etype, spec in EDGES.items():
        edge = (etype, spec.sources[0], spec.targets[0])
        for name in ("edge_touch", "edge_touch_by_source", "edge_merge", "edge_merge_one"):
            assert "<<" not in cypher.render(name, edge=edge, tag="Tempo")


@pytest.mark.parametrize(
    "evil", ["Service) DETACH DELETE (n", "Service`", "x'}) DETACH DELETE n //", "service"]
)
def test_labels_and_types_come_only_from_the_schema(evil: str) -> None:
    with pytest.raises(cypher.TemplateError):
        cypher.render("node_merge", label=evil)
    with pytest.raises(cypher.TemplateError):
        cypher.render("edge_merge", edge=(evil, "Service", "Service"))
    with pytest.raises(cypher.TemplateError):
        cypher.render_type("export_edges", evil)
    with pytest.raises(cypher.TemplateError):
        cypher.load("../store")


def test_every_template_file_is_listed_and_loads() -> None:
    names = cypher.names()
    assert {"node_merge", "edge_merge", "stats_nodes", "export_edges"} <= set(names)
    for name in names:
        assert cypher.load(name).strip()


def test_every_template_the_code_names_exists() -> None:
    """A template deleted or renamed in one place must not leave a caller behind."""
    import re

    from sgtest import REPO

    pattern = re.compile(r"""cypher\.(?:load|render|render_type)\(\s*["']([a-z0-9_]+)["']""")
    named: set[str] = set()
    for folder in ("stackgraph", "ingest", "rca", "memory", "eval", "schema", "cypher"):
        for path in (REPO / folder).rglob("*.py"):
            named |= set(pattern.findall(path.read_text(encoding="utf-8")))
    assert named, "no template names found"
    missing = sorted(named - set(cypher.names()))
    assert missing == [], f"code names templates that do not exist: {missing}"
