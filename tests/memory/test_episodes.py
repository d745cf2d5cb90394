"""Episodes accumulate, supersede keeps every version, and both time axes answer."""

from __future__ import annotations

from typing import Any

import pytest

from stackgraph import cypher
from stackgraph.errors import InputError
from stackgraph.ingest import GraphIngestor
from stackgraph.memory import (
    EntityRef,
    IncidentOutcome,
    Memory,
    current_version,
    record_episode,
    search,
    supersede,
    versions,
)
from stackgraph.store import GraphStore


def oom(fp: str = "inc-oom", root: str = "memory leak in cart serialisation") -> IncidentOutcome:
    return IncidentOutcome(
        fp, "checkout", "checkout pods OOMKilled, restarts climbing", 100.0,
        "KubePodCrashLooping", root, "raised memory limit to 1Gi",
        entities=[EntityRef("error", "OOMKilled")],
    )  # fmt: skip


def pool() -> IncidentOutcome:
    return IncidentOutcome(
        "inc-pool", "payment", "payment timeouts acquiring database connections", 150.0,
        "HighLatencyP99", "pool of 10 exhausted", "pool raised to 50",
        entities=[EntityRef("datastore", "payments-db")],
    )  # fmt: skip


def count(store: GraphStore, label: str) -> int:
    rows = store.read(cypher.load("stats_nodes"))
    return next((int(r["n"]) for r in rows if r["label"] == label), 0)


def test_episodes_accumulate_and_rerecording_is_idempotent(
    store: GraphStore, writer: GraphIngestor, memory: Memory, clock: Any
) -> None:
    first = record_episode(writer, oom(), memory)
    assert first.created and first.version == 1 and first.ingested_at == 1000.0
    record_episode(writer, pool(), memory)
    clock.t = 1100.0
    again = record_episode(writer, oom(), memory)
    assert not again.created and again.version == 1
    assert count(store, "MemoryEpisode") == 2
    # entities are deduplicated and normalised: service, alert, error, datastore
    assert count(store, "MemoryEntity") == 6
    hits = search(store, "pods OOMKilled again", memory=memory, now=5000.0)
    assert hits[0].incident == "inc-oom"
    assert {h.incident for h in hits} == {"inc-oom", "inc-pool"}


def test_feedback_correction_supersedes_without_deleting(
    store: GraphStore, writer: GraphIngestor, memory: Memory, clock: Any
) -> None:
    record_episode(writer, oom(), memory)
    clock.t = 2000.0
    (v2,) = supersede(
        writer, oom(root="JVM heap flag lost in the last deploy"), memory,
        kind="correction", reason="feedback: heap flag",
    )  # fmt: skip
    assert (v2.version, v2.t_valid, v2.ingested_at) == (2, 100.0, 2000.0)
    old, new = versions(store, "inc-oom")
    assert old.expired_at == 2000.0 and new.expired_at is None
    assert new.fields["supersedes"] == [
        {"version": 1, "kind": "correction", "reason": "feedback: heap flag"}
    ]
    cur = current_version(store, "inc-oom")
    assert cur is not None and cur.fields["root_cause"].startswith("JVM heap flag")
    # the old version's MENTIONS edges are closed with it
    (hit,) = search(store, "OOMKilled", memory=memory, limit=1, now=3000.0)
    assert hit.version == 2


def test_same_question_answers_by_as_of_and_known_at(
    store: GraphStore, writer: GraphIngestor, memory: Memory, clock: Any
) -> None:
    """t=1000 recorded (v1); t=2000 feedback corrects the root cause (v2);
    t=3000 a newer resolution takes effect from event time 2500 (v3 closes at 2500, v4)."""
    record_episode(writer, oom(), memory)
    clock.t = 2000.0
    supersede(writer, oom(root="JVM heap flag lost"), memory, kind="correction", reason="fb")
    clock.t = 3000.0
    newer = IncidentOutcome(
        "inc-oom", "checkout", "checkout pods OOMKilled, restarts climbing", 100.0,
        "KubePodCrashLooping", "JVM heap flag lost", "heap flag pinned in the base chart",
        entities=[EntityRef("error", "oomkilled")],
    )  # fmt: skip
    v3, v4 = supersede(writer, newer, memory, kind="change", reason="fix", effective_at=2500.0)
    assert (v3.t_valid, v3.t_invalid, v4.t_valid, v4.t_invalid) == (100.0, 2500.0, 2500.0, None)

    def ask(**kw: float) -> tuple[int, str, str]:
        (hit,) = search(store, "checkout OOMKilled", memory=memory, limit=1, now=9000.0, **kw)
        return hit.version, hit.root_cause, hit.resolution

    assert ask() == (4, "JVM heap flag lost", "heap flag pinned in the base chart")
    assert ask(known_at=1500.0) == (1, "memory leak in cart serialisation",
                                    "raised memory limit to 1Gi")  # fmt: skip
    assert ask(known_at=2500.0) == (2, "JVM heap flag lost", "raised memory limit to 1Gi")
    assert ask(as_of=2000.0) == (3, "JVM heap flag lost", "raised memory limit to 1Gi")
    assert ask(as_of=2600.0) == (4, "JVM heap flag lost", "heap flag pinned in the base chart")
    # at 2500 we had not yet heard of the newer resolution: as of 2600 we believed v2
    assert ask(as_of=2600.0, known_at=2500.0)[0] == 2
    # nothing was known before the first write; nothing was true before the incident
    assert search(store, "checkout OOMKilled", memory=memory, known_at=500.0, now=9000.0) == []
    assert search(store, "checkout OOMKilled", memory=memory, as_of=50.0, now=9000.0) == []
    assert [v.version for v in versions(store, "inc-oom")] == [1, 2, 3, 4]


def test_filters_service_and_time_range(
    store: GraphStore, writer: GraphIngestor, memory: Memory
) -> None:
    record_episode(writer, oom(), memory)
    record_episode(writer, pool(), memory)
    q = "timeouts and restarts"
    only = search(store, q, memory=memory, service="payment", only_service=True, now=9e3)
    assert [h.incident for h in only] == ["inc-pool"]
    assert [h.incident for h in search(store, q, memory=memory, since=120.0, now=9e3)] == [
        "inc-pool"
    ]
    assert [h.incident for h in search(store, q, memory=memory, until=120.0, now=9e3)] == [
        "inc-oom"
    ]


def test_hits_say_why_and_which_entities_are_shared(
    store: GraphStore, writer: GraphIngestor, memory: Memory
) -> None:
    record_episode(writer, oom(), memory)
    record_episode(writer, pool(), memory)
    (hit, *_) = search(
        store, "checkout containers OOMKilled", memory=memory, service="checkout", now=9e3
    )
    assert hit.incident == "inc-oom"
    assert set(hit.retrievers) == {"vector", "bm25", "graph"}
    assert {"error:oomkilled", "service:checkout"} <= set(hit.shared_entities)
    assert any(w.startswith("graph:") and "error:oomkilled" in w for w in hit.why)


def test_bad_outcomes_are_refused_before_writing(
    store: GraphStore, writer: GraphIngestor, memory: Memory
) -> None:
    bad = IncidentOutcome("x", "checkout", "s", 1.0, entities=[EntityRef("colour", "red")])
    with pytest.raises(InputError, match="'colour' is not one of"):
        record_episode(writer, bad, memory)
    with pytest.raises(InputError, match="symptom is empty"):
        record_episode(writer, IncidentOutcome("x", "checkout", " ", 1.0), memory)
    with pytest.raises(InputError, match="no current memory episode"):
        supersede(writer, oom("never-recorded"), memory)
    assert count(store, "MemoryEpisode") == 0
