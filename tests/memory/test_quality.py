"""Hybrid retrieval beats or ties each single retriever on the labelled set (floors)."""

from __future__ import annotations

from stackgraph.eval.memory import load_incidents, run_memory_eval
from stackgraph.memory import Memory
from stackgraph.store import GraphStore


def test_labelled_set_is_large_and_grouped() -> None:
    incidents = load_incidents()
    groups = {i.group for i in incidents}
    assert len(incidents) >= 100 and len(groups) >= 20
    assert all(sum(i.group == g for i in incidents) >= 4 for g in groups)
    assert len({i.outcome.symptom for i in incidents}) == len(incidents)


def test_hybrid_beats_or_ties_single_retrievers(store: GraphStore, memory: Memory) -> None:
    result = run_memory_eval(store, memory=memory)
    m = result["methods"]
    assert set(m) == {"hybrid", "vector", "bm25", "graph"}
    singles = [m[name] for name in ("vector", "bm25", "graph")]
    assert m["hybrid"]["recall5"] >= max(s["recall5"] for s in singles)
    assert m["hybrid"]["mrr"] >= max(s["mrr"] for s in singles) - 0.02
    assert m["hybrid"]["recall5"] >= 0.45 and m["hybrid"]["mrr"] >= 0.65
