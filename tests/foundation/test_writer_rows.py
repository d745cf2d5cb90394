"""The writer's column shortcuts give the per-value answers: float texts made once per
distinct value, float columns checked by their sum, one format string per shape, a
window's identities made a shape at a time (merging as record by record does), and a
content hash taken over the values that tells every value apart and is the same in every
process."""

from __future__ import annotations

import math
import subprocess
import sys
from enum import StrEnum

from stackgraph.dump import export_lines
from stackgraph.ingest import GraphIngestor, content_hash
from stackgraph.ingest.rows import PropsTexts, column_text, map_texts
from stackgraph.params import text
from stackgraph.schema import EdgeRecord, NodeRecord, NodeRef, RecordBatch
from stackgraph.schema.validate import check_value, column_ok
from stackgraph.store import GraphStore


def test_float_texts_are_each_values_own_text() -> None:
    repeated = [0.1, 2.5, 0.1, 1e-7, 2.5] * 40
    zeros = [0.0, -0.0, 1.5, 1.5] * 40
    mixed = [1, 1.0, 2, 2.0] * 40
    for col in (repeated, zeros, mixed, [3.25]):
        assert column_text(col) == [text(v) for v in col]
    assert column_text(zeros)[:2] == ["0.0", "-0.0"]


def test_column_check_by_sum_agrees_with_each_value() -> None:
    columns = [
        [1.0, 2.5, 3],
        [1e308, 1e308],  # the sum overflows: a false alarm, each record is checked after
        [10**400, 1.5],  # an int too large for a float
        [1.0, math.nan],
        [math.inf, 1],
        [-math.inf, math.inf],
        [True, 2, 0.5],
    ]
    for col in columns:
        each = all(check_value(v) is None for v in col)
        if column_ok(col):
            assert each, col
    assert not column_ok([1e308, 1e308]) and all(check_value(v) is None for v in [1e308])


def test_rows_format_keeps_names_with_a_percent_sign() -> None:
    assert map_texts(["a%s", "b"], [[1, 2], ["x", "y"]]) == [
        '{`a%s`:1,`b`:"x"}',
        '{`a%s`:2,`b`:"y"}',
    ]
    assert content_hash({"a%d": 1}) != content_hash({"a%s": 1})


def _ref(name: str) -> NodeRef:
    return NodeRef("Service", {"name": name})


def test_huge_floats_are_written_though_their_column_sum_overflows(store: GraphStore) -> None:
    nodes = [NodeRecord("Service", {"name": n}, {"load": 1e308}) for n in ("a", "b", "c")]
    with GraphIngestor(store) as w:
        report = w.write(RecordBatch(nodes, []))
    assert not report.rejected and report.nodes["Service"].created == 3


def test_a_window_naming_one_edge_twice_merges_it_as_before(store: GraphStore) -> None:
    """Two records of one edge with different property names (two shapes): the window is
    merged record by record, so the later provenance and both properties stand."""
    nodes = [NodeRecord("Service", {"name": n}, {"tier": 1}) for n in ("a", "b", "c")]
    edges = [
        EdgeRecord("CALLS", _ref("a"), _ref("b"), {"trace_count": 1}, "Tempo"),
        EdgeRecord("CALLS", _ref("b"), _ref("c"), {"trace_count": 2}, "Tempo"),
        EdgeRecord("CALLS", _ref("a"), _ref("b"), {"error_rate": 0.5}, "Tempo", "Candidate"),
    ]
    with GraphIngestor(store) as w:
        report = w.write(RecordBatch(nodes, edges))
        assert report.edges["CALLS"].created == 2 and not report.rejected
        once = export_lines(store)
        again = w.write(RecordBatch(nodes, edges))
    assert again.edges["CALLS"].unchanged == 2
    assert export_lines(store) == once
    (ab,) = [line for line in once if '"a"' in line and '"CALLS"' in line]
    assert '"error_rate":0.5' in ab and '"trace_count":1' in ab and '"Candidate"' in ab


class Tier(StrEnum):
    GOLD = "gold"


def test_content_hash_tells_values_of_every_type_apart() -> None:
    values = [1, 1.0, True, "1", [1], [1.0], 0.0, -0.0, "", None, Tier.GOLD, "gold", 10**30]
    hashes = {content_hash({"v": v, "source": "Tempo"}) for v in values}
    assert len(hashes) == len(values)
    assert content_hash({"a": 1}) != content_hash({"b": 1})
    assert content_hash({"a": 1, "b": 2}) != content_hash({"a": 2, "b": 1})
    assert content_hash({"a": Tier.GOLD}) == content_hash({"a": Tier("gold")})  # as text


_PROPS = "{'owner': 'team-a', 'tier': 2, 'weight': 0.1, 'aliases': ['a', 'b'], 'up': True}"


def test_content_hash_is_the_same_in_every_process_whatever_shares_the_values() -> None:
    """Marshal's later versions mark objects that are shared (a reference count above one),
    so the same values could give other bytes; the hash must not move with that, nor with
    the process's string hash seed."""
    weight = 0.1
    shared = {"owner": "team-a", "tier": 2, "weight": weight, "aliases": ["a", "b"], "up": True}
    keep = [weight, shared["owner"], shared["aliases"]] * 3  # more references to the values
    here = content_hash(shared)
    code = f"from stackgraph.ingest import content_hash; print(content_hash({_PROPS}))"
    for seed in ("0", "1", "12345"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, env={"PYTHONHASHSEED": seed})  # fmt: skip
        assert int(out.stdout) == here
    assert keep
    text_ = "x" * 20  # one object in two places, against two equal objects
    assert content_hash({"p": text_, "q": text_}) == content_hash(
        {"p": "x" * 20, "q": "".join(["x"] * 20)}
    )
    big = 10.0**20
    assert content_hash({"p": big, "q": [big]}) == content_hash({"p": 1e20, "q": [float("1e20")]})


def test_props_texts_of_some_rows_are_those_of_all() -> None:
    names = ["a", "b"]
    columns = [[1, 2.5, "x", [1, 2]], [0.1, -0.0, True, 'q"r']]
    whole = map_texts(names, columns)
    for picked in ([1], [0, 3], [0, 1, 2], []):
        assert PropsTexts(names, columns).some(picked) == [whole[i] for i in picked]
    texts = PropsTexts(names, columns)
    assert texts.make() == whole and texts.some([2]) == [whole[2]]


def test_content_hash_fits_a_graph_integer() -> None:
    """FalkorDB integers are signed 64-bit: a hash of 64 bits would not read back."""
    hashes = [content_hash({"v": i, "source": "Tempo"}) for i in range(2_000)]
    assert all(isinstance(h, int) and 0 <= h < 2**63 for h in hashes)
    assert max(hashes) > 2**61  # all 63 bits used (a draw of 2,000 misses that ~never)
