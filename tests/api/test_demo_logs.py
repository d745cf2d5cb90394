"""The demo's incident, with and without the example platform's log files.

The world-model is the demo's (catalog, manifests, the demo repo's history, the span
files, through the real lanes); plan and tool context are wired from settings as the API
wires them (`Planner.from_settings`, `context_from`). With `logs_path` set, the agent reads
the files through `loki_query`: payment's error lines are a line of evidence beside Git,
so payment is Validated. Without them nothing else moves and payment stays Supported.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stackgraph.api.app import context_from
from stackgraph.config import Settings
from stackgraph.demo.code import prepare_demo_repo
from stackgraph.demo.run import with_example_logs
from stackgraph.ingest import run_lanes
from stackgraph.rca import Planner
from stackgraph.rca.agent import ROOT_CAUSE_MIN_CONFIDENCE, Agent, AgentRun, Verdict
from stackgraph.rca.alertmanager import alerts_from_webhook
from stackgraph.store import GraphStore

from .conftest import REPO

PLATFORM = REPO / "examples" / "platform"
ALERT = REPO / "examples" / "alerts" / "checkout-high-error-rate.json"


@pytest.fixture
def demo(settings: Settings, store: GraphStore, tmp_path: Path) -> Settings:
    """The demo's world-model in this test's graph; settings with the demo repo mapped for
    the Git tools (`agent_repos`, as a monorepo user sets it) and no log source."""
    repo = prepare_demo_repo(PLATFORM / "repo", tmp_path / "shop")
    report, failures = run_lanes(
        store, settings, "catalog,infra,change,telemetry", catalog=PLATFORM / "catalog.yaml",
        manifests=PLATFORM / "manifests", repos=(repo,), options={"spans": PLATFORM / "traces"},
    )  # fmt: skip
    assert not failures and not report.rejected
    services = sorted(p.name for p in (repo / "services").iterdir())
    return settings.model_copy(update={"agent_repos": dict.fromkeys(services, repo)})


def incident(store: GraphStore, settings: Settings, agent_logs: bool = True) -> AgentRun:
    """Plan and verify the example alert as an API worker does (`agent_logs=False`: the
    tools get no log source, whatever the planner read)."""
    alert = alerts_from_webhook(json.loads(ALERT.read_text()), ALERT.name)[0]
    planner = Planner.from_settings(settings)
    plan = planner(store, alert)
    ctx = context_from(settings, store, logs=planner.logs if agent_logs else None)(alert, plan)
    return Agent().investigate(alert, plan, ctx)


def verdicts(run: AgentRun, suspect: str) -> dict[str, Verdict]:
    return {e.tool: e.verdict for e in run.sink.hypotheses[suspect].evidence}


def test_configured_log_files_validate_payment(store: GraphStore, demo: Settings) -> None:
    settings = with_example_logs(demo, REPO / "examples")
    assert settings.logs_path == PLATFORM / "logs"
    run = incident(store, settings)
    payment = run.sink.hypotheses["payment"]
    assert str(payment.state) == "Validated" and run.conclusion == "payment"
    assert payment.confidence >= ROOT_CAUSE_MIN_CONFIDENCE  # the write-back's threshold
    (logs,) = [e for e in payment.evidence if e.tool == "loki_query"]
    assert logs.verdict == Verdict.SUPPORTS and logs.result_summary.endswith("(log files)")
    assert "14 of 50 log lines of payment contain 'error'" in logs.result_summary
    assert verdicts(run, "payment")["git_log"] == Verdict.SUPPORTS
    # checkout logged payment's failures as warnings, not errors of its own
    assert verdicts(run, "checkout")["loki_query"] == Verdict.REFUTES
    assert str(run.sink.hypotheses["checkout"].state) != "Validated"


def test_without_log_files_payment_stays_supported(store: GraphStore, demo: Settings) -> None:
    with_logs = incident(store, with_example_logs(demo, REPO / "examples"))
    without = incident(store, demo)
    payment = without.sink.hypotheses["payment"]
    assert str(payment.state) == "Supported" and without.conclusion == "payment"
    assert all(e.tool != "loki_query" for h in without.hypotheses for e in h.evidence)
    # the other checks of payment are the same: the log files added one line, no more
    others = {k: v for k, v in verdicts(with_logs, "payment").items() if k != "loki_query"}
    assert verdicts(without, "payment") == others


def test_the_plan_reading_logs_validates_nothing_by_itself(
    store: GraphStore, demo: Settings
) -> None:
    """The plan suggests `loki_query` for candidates with log lines; with no log source in
    the tools' context the check cannot run, and the plan's own log vote counts for nothing."""
    run = incident(store, with_example_logs(demo, REPO / "examples"), agent_logs=False)
    assert "loki_query" in run.sink.hypotheses["payment"].suggested_tools
    assert str(run.sink.hypotheses["payment"].state) == "Supported"
    assert "loki_query" not in verdicts(run, "payment")


def test_the_demo_keeps_logs_a_user_configured(settings: Settings, tmp_path: Path) -> None:
    mine = settings.model_copy(update={"logs_path": tmp_path})
    assert with_example_logs(mine, REPO / "examples").logs_path == tmp_path
    loki = settings.model_copy(update={"loki_url": "http://loki:3100"})
    assert with_example_logs(loki, REPO / "examples").logs_path is None
    assert with_example_logs(settings, tmp_path).logs_path is None  # examples without logs
