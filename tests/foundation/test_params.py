"""The parameter header is the only path values take into FalkorDB: check its escaping."""

from __future__ import annotations

from enum import StrEnum

import pytest
from sgtest import leased

from stackgraph.params import header
from stackgraph.schema import NodeRecord, validate_node
from stackgraph.store import GraphStore


class Colour(StrEnum):
    RED = "red"


def test_header_shapes() -> None:
    assert header({}) == ""
    text = header({"a": 'x"y\\z', "b": [1, 2.5, True], "c": {"k": None}, "d": Colour.RED})
    assert text == 'CYPHER `a`="x\\"y\\\\z" `b`=[1,2.5,true] `c`={`k`:null} `d`="red" '


@pytest.mark.parametrize("key", ["", "a`b"])
def test_header_refuses_bad_names(key: str) -> None:
    with pytest.raises(ValueError):
        header({key: 1})


def test_header_refuses_unknown_types() -> None:
    with pytest.raises(TypeError, match="set"):
        header({"a": {1, 2}})


@pytest.mark.parametrize("value", ["a\\", '\\"', "\\\\\"'", "1e5", "-0.0", "\n\r\t"])
def test_values_round_trip(store: GraphStore, value: str) -> None:
    from stackgraph import cypher

    q = cypher.load("stats_nodes")  # any read: the header is parsed before the query
    assert store.read(q, {"v": value}) == []
    numbers = [0.1, 1e-7, 1e20, -3.0, 2.0**40]
    with leased(store) as lease:
        store.write(cypher.Query("CREATE (:T {v: $v, n: $n})"), {"v": value, "n": numbers},
                    lease=lease)  # fmt: skip
    (row,) = store.read(cypher.Query("MATCH (t:T) RETURN t.v AS v, t.n AS n"))
    assert row == {"v": value, "n": numbers}


@pytest.mark.parametrize("name", ["a b", "x`y", "", "1st", "a-b"])
def test_property_names_are_validated(name: str) -> None:
    problems = validate_node(NodeRecord("Service", {"name": "s"}, {name: 1}))
    assert problems and problems[0].message == "is not a valid property name"
