"""`stackgraph eval --only`: a dataset read as a platform that records less would hold it,
every method in the same run on the same narrowed cases."""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pytest
from sgtest import require

from stackgraph.config import Settings
from stackgraph.eval.datasets import USER, DatasetError
from stackgraph.eval.datasets._common import spread_to_callers
from stackgraph.eval.datasets.model import series
from stackgraph.eval.e2e import run_e2e
from stackgraph.eval.harness import evaluate
from stackgraph.eval.narrowed import GOLDEN, left_out, narrowed, own, sources_from
from stackgraph.eval.seeded import load_seeded
from stackgraph.store import GraphStore


def test_only_the_kept_sources_stay_and_the_cases_read_are_untouched() -> None:
    cases = load_seeded()
    kinds = {m.kind for c in cases for m in c.metrics}
    assert {"cpu", "memory", "latency"} <= kinds and any(c.changes for c in cases)
    before = [(len(c.metrics), len(c.changes)) for c in cases]
    golden = narrowed(cases, GOLDEN)
    assert {m.kind for c in golden for m in c.metrics} <= GOLDEN
    assert {m.kind for c in golden for m in c.metrics} & {"latency", "errors"}
    assert not any(c.changes or c.logs or c.spans for c in golden)
    assert [(len(c.metrics), len(c.changes)) for c in cases] == before
    with_releases = narrowed(cases, {"latency", "releases"})
    assert [c.changes for c in with_releases] == [c.changes for c in cases]
    assert [c.root_cause for c in golden] == [c.root_cause for c in cases]


def test_without_topology_no_case_states_its_calls_or_manifests() -> None:
    cases = load_seeded()
    assert all(c.call_edges for c in cases)
    bare = narrowed(cases, None, topology=False)
    assert not any(c.call_edges or c.manifests for c in bare)
    assert not any(m.client not in (None, USER) for c in bare for m in c.metrics if m.spread)
    assert [c.call_edges for c in narrowed(cases, None)] == [c.call_edges for c in cases]
    notes = left_out(GOLDEN, topology=False)
    assert notes[0].startswith("only: errors, latency, workload kept")
    assert notes[1].startswith("no topology: the call graph and the manifests")
    assert left_out(None) == []


def test_without_topology_a_signal_divided_over_stated_callers_is_the_services_own() -> None:
    """A service-level rate the dataset split over the callers its call graph states has no
    measured caller: without that graph it is the service's own again (Tempo's `user`), the
    rates summed back; a measured edge series keeps its caller."""
    t = np.arange(0.0, 600.0, 60.0)
    edges = [("web", "cart"), ("checkout", "cart")]
    spread = spread_to_callers("cart", edges, t, requests=np.full(t.size, 8.0),
                               latency_server=np.full(t.size, 0.2))  # fmt: skip
    measured = series("cart", "latency_client", t, np.full(t.size, 0.3), client="web")
    cpu = series("cart", "cpu", t, np.full(t.size, 0.5))
    mine = own([*spread, measured, cpu])
    assert measured in mine and cpu in mine
    rebuilt = {m.name: m for m in mine if m.spread}
    assert set(rebuilt) == {"requests", "latency_server"}
    assert {m.client for m in rebuilt.values()} == {USER}
    assert np.allclose(rebuilt["requests"].values, 8.0)  # 4 + 4 req/s, as the service served
    assert np.allclose(rebuilt["latency_server"].values, 0.2)


def test_sources_are_named_or_the_error_lists_the_known_ones() -> None:
    assert sources_from("golden") == GOLDEN
    assert sources_from("latency, logs,golden") == GOLDEN | {"logs"}
    with pytest.raises(DatasetError, match=r"unknown source\(s\) disk.*known: golden, cpu"):
        sources_from("cpu,disk")
    with pytest.raises(DatasetError, match="none given"):
        sources_from(" , ")


def test_the_cli_refuses_an_unknown_source_before_any_replay() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "stackgraph", "eval", "--dataset", "seeded", "--only", "gpu"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "unknown source(s) gpu" in done.stderr


def test_every_method_reads_the_narrowed_cases(store: GraphStore, settings: Settings) -> None:
    require(all(shutil.which(b) for b in ("prometheus", "promtool")), "Debian prometheus")
    full = evaluate("seeded", None, store, settings=settings, limit=2, attempts=0)
    golden = evaluate("seeded", None, store, settings=settings, limit=2, attempts=0,
                      only=GOLDEN)  # fmt: skip
    assert any(n.startswith("only: errors, latency, workload kept") for n in golden["notes"])
    bare = evaluate("seeded", None, store, settings=settings, limit=1, attempts=0,
                    topology=False)  # fmt: skip
    assert any(n.startswith("no topology:") for n in bare["notes"])
    assert not any(n.startswith("only:") for n in full["notes"])
    assert 0 < golden["cost"]["series"] < full["cost"]["series"]
    assert golden["methods"].keys() == full["methods"].keys() - {
        m for m in full["methods"] if m.endswith("+releases")
    }


def test_end_to_end_the_agent_reads_the_narrowed_world(
    store: GraphStore, settings: Settings
) -> None:
    require(all(shutil.which(b) for b in ("prometheus", "promtool", "git")), "prometheus, git")
    one = {"limit": 1, "distractor": False, "feedback": False}
    full = run_e2e("seeded", None, store, settings=settings, **one)
    card = run_e2e("seeded", None, store, settings=settings, only=frozenset({"latency"}), **one)
    assert not card["skipped"], card["skipped"]
    assert any(n.startswith("only: latency kept") for n in card["notes"])
    (before,), (after,) = full["incidents"], card["incidents"]
    assert before["root_cause_evidence"]["prometheus_query:signal=cpu"].startswith("supports:")
    # the world held no CPU series: no check of the agent found one to support it
    assert after["state"] == "done" and after["tool_calls"] > 0
    verdicts = [v.partition(":")[0] for v in after["root_cause_evidence"].values()]
    assert "supports" not in verdicts, after
    assert card["cost"]["series"] < full["cost"]["series"]
