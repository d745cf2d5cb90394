"""`stackgraph memory ...` as a user runs it, and the agent tool's result shapes."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from sgtest import stackgraph_cli

from stackgraph.config import Settings
from stackgraph.ingest import GraphIngestor
from stackgraph.memory import IncidentOutcome, Memory, memory_lookup, record_episode
from stackgraph.store import GraphStore

sg = stackgraph_cli


def test_record_search_show_history(store: GraphStore, settings: Settings, tmp_path: Path) -> None:
    f = tmp_path / "outcomes.yaml"
    f.write_text(yaml.safe_dump([
        {"incident_fingerprint": "inc-1", "service": "checkout", "alert": "KubePodCrashLooping",
         "symptom": "checkout pods OOMKilled", "root_cause": "heap too small",
         "occurred_at": "2026-01-05T10:00:00Z", "entities": ["error:oomkilled"]},
        {"incident_fingerprint": "inc-2", "service": "payment", "alert": "HighLatencyP99",
         "symptom": "payments-db pool exhausted", "root_cause": "pool too small",
         "occurred_at": "2026-01-06T10:00:00Z", "entities": ["datastore:payments-db"]},
    ]))  # fmt: skip
    written = json.loads(sg(settings, "memory", "record", str(f), "--json").stdout)
    assert [(w["incident"], w["version"], w["created"]) for w in written] == [
        ("inc-1", 1, True), ("inc-2", 1, True)]  # fmt: skip
    again = json.loads(sg(settings, "memory", "record", str(f), "--json").stdout)
    assert [w["created"] for w in again] == [False, False]

    hits = json.loads(sg(settings, "memory", "search", "pods OOMKilled", "--service",
                         "checkout", "--limit", "5", "--json").stdout)  # fmt: skip
    assert hits[0]["incident"] == "inc-1" and hits[0]["score"] > 0 and hits[0]["why"]
    before = json.loads(sg(settings, "memory", "search", "pods OOMKilled",
                           "--as-of", "2026-01-01T00:00:00Z", "--json").stdout)  # fmt: skip
    assert before == []

    f.write_text(yaml.safe_dump([{
        "incident_fingerprint": "inc-1", "service": "checkout", "alert": "KubePodCrashLooping",
        "symptom": "checkout pods OOMKilled", "root_cause": "leak in the cart cache",
        "occurred_at": "2026-01-05T10:00:00Z", "entities": ["error:oomkilled"]}]))  # fmt: skip
    sg(settings, "memory", "record", str(f), "--correction", "feedback from on-call")
    shown = json.loads(sg(settings, "memory", "show", "inc-1", "--json").stdout)
    assert shown["version"] == 2 and shown["root_cause"] == "leak in the cart cache"
    history = json.loads(sg(settings, "memory", "history", "inc-1", "--json").stdout)
    assert [h["version"] for h in history] == [1, 2]
    assert history[0]["expired_at"] is not None and history[1]["expired_at"] is None
    assert "history" in sg(settings, "memory", "history", "inc-1").stdout
    missing = sg(settings, "memory", "show", "nope", ok=False)
    assert missing.returncode == 1 and "no memory episode" in missing.stderr
    bad = sg(settings, "memory", "search", "x", "--as-of", "soon", ok=False)
    assert bad.returncode == 2 and "--as-of: 'soon' is neither" in bad.stderr


def test_memory_lookup_tool(store: GraphStore, memory: Memory) -> None:
    assert memory_lookup(store, "pods OOMKilled", memory=memory).status == "no_data"
    assert memory_lookup(store, "  ", memory=memory).status == "error"
    with GraphIngestor(store) as writer:
        record_episode(
            writer, IncidentOutcome("inc-9", "cart", "cart pods OOMKilled", 1.0,
                                    root_cause="leak"), memory,
        )  # fmt: skip
    found = memory_lookup(store, "cart OOMKilled", memory=memory, service="cart")
    assert found.status == "success" and found.hits[0].incident == "inc-9"
    assert found.to_dict()["hits"][0]["root_cause"] == "leak"
