"""The in-process scheduler on the session's real embedded FalkorDB: it runs the catalog
lane through the single writer, and a run that finds the writer lease held is skipped."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from sgtest import run_cli

from stackgraph.config import Settings, load_settings
from stackgraph.dump import stats
from stackgraph.errors import ConfigError
from stackgraph.ingest import WriterLease
from stackgraph.scheduler import Job, JobOutcome, build_scheduler, default_jobs, run_job
from stackgraph.store import GraphStore

WAIT_S = 60  # a generous bound for a job to report; never a speed assertion


def with_catalog(settings: Settings, examples: Path, **extra: object) -> Settings:
    return settings.model_copy(update={"catalog": examples / "platform" / "catalog.yaml", **extra})


def catalog_job(examples: Path, interval_s: float = 3600) -> Job:
    return Job("static", "catalog", interval_s, catalog=examples / "platform" / "catalog.yaml")


def test_run_job_writes_the_catalog_lane(settings: Settings, store: GraphStore, examples: Path):
    outcome = run_job(settings, catalog_job(examples))
    assert outcome.status == "ok", outcome.detail
    assert outcome.report is not None and outcome.report.nodes["Service"].created == 8
    assert stats(store)["nodes"]["Service"] == 8
    again = run_job(settings, catalog_job(examples), store)
    assert again.status == "ok" and again.report is not None
    assert again.report.nodes["Service"].unchanged == 8


def test_held_lease_skips_the_run_and_writes_nothing(
    settings: Settings, store: GraphStore, examples: Path
) -> None:
    with WriterLease(store.conn, settings.graph, ttl_s=30, who="cronjob"):
        outcome = run_job(settings, catalog_job(examples), store)
    assert outcome.status == "skipped"
    assert "cronjob@" in outcome.detail
    assert stats(store)["nodes"] == {}


def test_bad_source_fails_the_run_without_raising(settings: Settings, store: GraphStore) -> None:
    outcome = run_job(settings, Job("static", "catalog", 60, catalog=Path("/nonexistent.yaml")))
    assert outcome.status == "failed" and "/nonexistent.yaml" in outcome.detail


def test_scheduler_runs_job_then_skips_while_lease_is_held_and_keeps_going(
    settings: Settings, store: GraphStore, examples: Path
) -> None:
    outcomes: queue.Queue[JobOutcome] = queue.Queue()
    lease = WriterLease(store.conn, settings.graph, ttl_s=30, who="other-writer")
    lease.acquire()
    scheduler = build_scheduler(
        settings, [catalog_job(examples, interval_s=0.5)], on_outcome=outcomes.put
    )
    scheduler.start()
    try:
        first = outcomes.get(timeout=WAIT_S)
        assert first.status == "skipped" and "other-writer@" in first.detail
        assert scheduler.running
        assert stats(store)["nodes"] == {}
        lease.release()
        later = outcomes.get(timeout=WAIT_S)
        while later.status == "skipped":  # a run may have started before the release
            later = outcomes.get(timeout=WAIT_S)
        assert later.status == "ok", later.detail
        assert stats(store)["nodes"]["Service"] == 8
    finally:
        scheduler.shutdown(wait=True)
        lease.release()


def test_build_scheduler_refuses_unknown_lanes_and_duplicate_names(settings: Settings) -> None:
    with pytest.raises(ConfigError, match=r"job 'x'.*unknown lane\(s\) nope"):
        build_scheduler(settings, [Job("x", "nope", 60)])
    with pytest.raises(ConfigError, match="used twice: a"):
        build_scheduler(settings, [Job("a", "catalog", 60), Job("a", "catalog", 30)])
    with pytest.raises(ConfigError, match="interval_s must be > 0"):
        Job("a", "catalog", 0)


def test_scheduler_uses_the_configured_intervals(settings: Settings, examples: Path) -> None:
    s = with_catalog(settings, examples, schedule_static_interval_s=1234.0)
    scheduler = build_scheduler(s, default_jobs(s), run_now=False)
    job = next(j for j in scheduler.get_jobs() if j.id == "static")
    assert job.trigger.interval.total_seconds() == 1234.0


def test_default_jobs_follow_settings(settings: Settings, examples: Path) -> None:
    # only installed lanes that apply: no catalog file -> no catalog lane
    assert all("catalog" not in j.lanes for j in default_jobs(settings))
    jobs = default_jobs(with_catalog(settings, examples, schedule_static_interval_s=600.0))
    static = next(j for j in jobs if j.name == "static")
    assert static.lanes.split(",")[0] == "catalog" and static.interval_s == 600.0
    assert static.catalog == examples / "platform" / "catalog.yaml"
    off = settings.model_copy(update={"schedule_static_lanes": "", "catalog": Path("c.yaml")})
    assert "static" not in [j.name for j in default_jobs(off)]
    with pytest.raises(ConfigError, match="schedule_change_lanes: unknown lane"):
        default_jobs(settings.model_copy(update={"schedule_change_lanes": "catalog,bogus"}))


def test_intervals_come_from_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STACKGRAPH_SCHEDULE_TELEMETRY_INTERVAL_S", "45")
    monkeypatch.setenv("STACKGRAPH_SCHEDULE_STATIC_LANES", "catalog")
    s = load_settings(None, data_dir=tmp_path)
    assert s.schedule_telemetry_interval_s == 45.0
    assert s.schedule_static_lanes == "catalog"
    with pytest.raises(ConfigError, match="schedule_change_interval_s"):
        monkeypatch.setenv("STACKGRAPH_SCHEDULE_CHANGE_INTERVAL_S", "0")
        load_settings(None, data_dir=tmp_path)


# -- the command line, as a CronJob or a container runs it ----------------------------


def sg_env(settings: Settings, examples: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKGRAPH_")}
    assert settings.falkordb_url
    env |= {
        "FALKORDB_URL": settings.falkordb_url,
        "STACKGRAPH_GRAPH": settings.graph,
        "STACKGRAPH_DATA_DIR": str(settings.data_dir),
        "STACKGRAPH_CATALOG": str(examples / "platform" / "catalog.yaml"),
        "STACKGRAPH_SCHEDULE_STATIC_LANES": "catalog",
    }
    return env


def sg(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env=env, ok=False, timeout=120)


def test_schedule_run_once_and_lease_exit_codes(
    settings: Settings, store: GraphStore, examples: Path
) -> None:
    env = sg_env(settings, examples)
    with WriterLease(store.conn, settings.graph, ttl_s=30, who="cronjob"):
        held = sg(env, "schedule", "run", "--once")
        ingest_held = sg(env, "ingest", "--lanes", "catalog")
    assert held.returncode == 75, held.stdout + held.stderr
    assert "static (catalog): skipped" in held.stdout and "cronjob@" in held.stdout
    assert ingest_held.returncode == 75 and "cronjob@" in ingest_held.stderr
    assert stats(store)["nodes"] == {}
    done = sg(env, "schedule", "run", "--once")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "static (catalog): ok" in done.stdout
    counts = json.loads(sg(env, "graph", "stats", "--json").stdout)
    assert counts["nodes"]["Service"] == 8


def test_schedule_run_in_foreground_stops_on_sigterm(
    settings: Settings, store: GraphStore, examples: Path
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "stackgraph", "schedule", "run"],
        env=sg_env(settings, examples), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    stderr = proc.stderr
    assert stderr is not None

    def read() -> None:
        for line in stderr:
            lines.put(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        # the graph fills kind by kind: wait for the job to finish, not for a first node
        while not any("schedule: job static ok" in x for x in seen):
            seen.append(lines.get(timeout=WAIT_S))
        assert stats(store)["nodes"].get("Service") == 8
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=WAIT_S) == 0, "".join(seen)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(timeout=WAIT_S)


def test_evolve_is_a_scheduled_job_and_its_verdicts_are_counted(
    settings: Settings, store: GraphStore
) -> None:
    from stackgraph.api.metrics import ApiMetrics

    every = settings.model_copy(update={"schedule_evolve_interval_s": 86400.0})
    job = next(j for j in default_jobs(every) if j.name == "evolve")
    assert job.kind == "evolve" and job.interval_s == 86400.0
    assert not any(j.kind == "evolve" for j in default_jobs(settings))
    outcome = run_job(every, job, store)  # nothing labelled yet: nothing to propose
    assert outcome.status == "ok" and outcome.evolution is not None
    assert outcome.evolution["proposals"] == 0 and outcome.detail.startswith("0 proposal")
    metrics = ApiMetrics()
    metrics.count_evolution({"admitted": 1, "rejected_inner": 2, "rejected_outer": 0})
    text = __import__("prometheus_client").generate_latest(metrics.registry).decode()
    assert 'stackgraph_knowledge_proposals_total{verdict="rejected_inner"} 2.0' in text
