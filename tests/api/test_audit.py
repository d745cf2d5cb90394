"""The stage audit and its repairs (after STAR), on a real graph, through the real agent:
a model's broken stages are located and repaired by deterministic operators, the floor's
are scored for what the data allowed, and a repair that paid is remembered in the graph."""

from __future__ import annotations

import time
from pathlib import Path

from stackgraph.ingest import GraphIngestor
from stackgraph.rca.agent import Agent, AgentConfig, Ending, ToolContext
from stackgraph.rca.agent.audit import Claims, audit, remembered, stages_of
from stackgraph.rca.agent.audit.critic import CRITIC_PROMPT
from stackgraph.rca.agent.audit.run import graph_neighbours
from stackgraph.rca.agent.evidence import Hypothesis, ToolEvidence, Verdict
from stackgraph.rca.agent.sink import EvidenceSink
from stackgraph.rca.model import Alert
from stackgraph.rca.outcome import IncidentOutcome, outcome_records
from stackgraph.store import GraphStore

from .conftest import ScriptedModel, call, payment_plan

NOW = time.time()
ALERT = Alert({"alertname": "HighErrorRate", "service": "checkout"},
              {"summary": "checkout 5xx > 5%"}, NOW, "fp-audit")  # fmt: skip


def ctx(store: GraphStore, repos: dict[str, Path]) -> ToolContext:
    return ToolContext(store=store, alert=ALERT, at=time.time(), repos=repos)


def model_run(store: GraphStore, model: ScriptedModel, repo: Path, **claims: object) -> Agent:
    model.script = [
        call("query_stack_graph", service="payment"),
        call("git_log", service="payment"),
        call("conclude", service="payment", summary="payment's timeout change", **claims),
        call("choose_patch", stage="DR", patch="recompute-confidence"),  # the stage critic
    ]
    return Agent(AgentConfig(ollama_host=model.url, model="scripted", max_steps=6))


def test_a_path_that_is_not_in_the_graph_and_a_made_up_confidence_are_repaired(
    platform: GraphStore, scripted_model: ScriptedModel, payment_repo: Path
) -> None:
    """The model claims payment → inventory → checkout (no payment–inventory edge exists)
    at confidence 0.1 (its one line of evidence gives 2/3): AS and DR are located,
    the slow path rebuilds the path from the graph and recomputes the confidence."""
    agent = model_run(platform, scripted_model, payment_repo,
                      path=["payment", "inventory", "checkout"], confidence=0.1)  # fmt: skip
    run = agent.investigate(ALERT, payment_plan(platform, ALERT),
                            ctx(platform, {"payment": payment_repo}))  # fmt: skip
    assert run.ending == Ending.CONCLUDED and run.conclusion == "payment"
    audit_doc = run.audit
    assert audit_doc is not None
    first = audit_doc["first"]["stages"]
    assert first["AS"]["problems"] == [
        "no edge payment - inventory in the graph the plan was ranked on"
    ]
    assert first["AS"]["score"] == 0.5 and first["DR"]["score"] == 0.0
    assert first["HS"]["score"] == 1.0
    # EP: git read the alert window but nothing compared it to a baseline (no Prometheus)
    assert first["EP"]["score"] == 0.5 and "baseline" in first["EP"]["problems"][0]
    assert audit_doc["route"] == "slow" and audit_doc["first"]["score"] == 0.5
    assert [(r["stage"], r["patch"]) for r in audit_doc["repairs"]] == [
        ("AS", "rebuild-path"), ("DR", "recompute-confidence"),
    ]  # fmt: skip
    assert audit_doc["artifacts"]["AS"] == {"path": ["payment", "checkout"], "claimed_by": "model"}
    assert audit_doc["artifacts"]["DR"]["confidence"] == run.sink.hypotheses["payment"].confidence
    assert audit_doc["score"] == 0.875 and audit_doc["stages"]["AS"]["score"] == 1.0
    # the model's stage critic was asked to pick among the failing stages' patches
    asked = scripted_model.requests[3]
    assert asked["messages"][0]["content"] == CRITIC_PROMPT
    offered = asked["tools"][0]["function"]["parameters"]["properties"]
    assert offered["stage"]["enum"] == ["AS", "DR", "EP"]
    assert audit_doc["critic"] == ["DR recompute-confidence"]
    assert "repaired AS by rebuild-path (0.50 -> 0.62), DR by recompute-confidence" in (
        run.report.text()
    )


def test_a_sound_model_run_passes_untouched(
    platform: GraphStore, scripted_model: ScriptedModel, payment_repo: Path
) -> None:
    agent = model_run(platform, scripted_model, payment_repo, path=["payment", "checkout"])
    run = agent.investigate(ALERT, payment_plan(platform, ALERT),
                            ctx(platform, {"payment": payment_repo}))  # fmt: skip
    assert run.audit is not None
    assert run.audit["route"] == "pass" and run.audit["repairs"] == []
    assert (
        run.audit["artifacts"]["EP"][1]["window"][1]
        == run.audit["artifacts"]["EP"][1]["window"][0] + 1800.0
    )  # the 30 min the git check read, ending at the alert


def test_an_ungrounded_hypothesis_is_located_at_hs(platform: GraphStore) -> None:
    """A hypothesis that left Candidate without accepted evidence about itself (e.g. a stored
    incident restored with its evidence cut) scores HS down, and HS is the worst stage."""
    now = time.time()  # after the platform was written
    sink = EvidenceSink({"payment": Hypothesis("payment", 1), "cart": Hypothesis("cart", 2)})
    sink.add(ToolEvidence("git_log", Verdict.SUPPORTS, "commit", "Git", hypothesis="payment",
                          window=(now - 1800, now)))  # fmt: skip
    stages = stages_of(sink, "payment", "checkout", {"payment": [["checkout", "payment"]]},
                       Claims(), now)  # fmt: skip
    broken = stages.hs[0].__class__("cart", "Supported", 0.3, ())
    stages = stages.__class__(stages.ep, (*stages.hs, broken), stages.as_, stages.dr,
                              stages.symptom, stages.at)  # fmt: skip
    result = audit(stages, sink, graph_neighbours(platform))
    assert result.stages["HS"].score == 0.5
    assert result.stages["HS"].problems == ("cart (Supported) cites no evidence",)
    assert result.stages["AS"].score == 1.0  # checkout -> payment exists


def test_evidence_read_up_to_the_firing_covers_a_plan_that_looks_up_to_later() -> None:
    """An alert delivered late: the plan looks up to now (`api_investigate_at: now`), the
    tools read the 30 min before the alert fired. That evidence read the alert window."""
    fired, now = NOW - 3 * 86400, NOW
    sink = EvidenceSink({"payment": Hypothesis("payment", 1)})
    sink.add(ToolEvidence("loki_query", Verdict.SUPPORTS, "14 error lines", "logs",
                          hypothesis="payment", window=(fired - 1800, fired),
                          baseline=(fired - 3600, fired - 1800)))  # fmt: skip
    paths = {"payment": [["checkout", "payment"]]}
    plan_window = (fired - 300, now)
    stages = stages_of(sink, "payment", "checkout", paths, Claims(), now, window=plan_window)
    assert audit(stages, sink, None).stages["EP"].score == 1.0
    before = stages_of(sink, "payment", "checkout", paths, Claims(), now, window=(0.0, 1.0))
    assert audit(before, sink, None).stages["EP"].problems == (
        "no evidence on payment read the alert window",
    )


def test_a_path_is_walked_at_the_alert_time(platform: GraphStore) -> None:
    """An edge first seen after the alert did not exist when it fired: not a feasible hop
    then, though it is now (time travel)."""
    from stackgraph.schema import EdgeRecord, NodeRef, RecordBatch
    from stackgraph.timetravel import neighbours_at

    payment, cart = (NodeRef("Service", {"name": n}) for n in ("payment", "cart"))
    late = RecordBatch(edges=[EdgeRecord("CALLS", payment, cart, {}, "Tempo")])
    with GraphIngestor(platform, who="test") as writer:
        writer.write(late)
    before = time.time() - 3600
    now = graph_neighbours(platform)
    assert "cart" in now("payment", None) and "cart" not in now("payment", before)
    assert {n for _, _, n in neighbours_at(platform, "payment", None)} >= {"cart", "checkout"}


def test_a_walk_for_a_path_passes_nodes_with_no_name(platform: GraphStore) -> None:
    """A release or an endpoint beside a service has no name: no hop, and no None to sort
    among the names (the walk failed the incident's job on that)."""
    from stackgraph.rca.agent.audit.repair import feasible_path
    from stackgraph.schema import EdgeRecord, NodeRecord, NodeRef, RecordBatch

    payment = NodeRef("Service", {"name": "payment"})
    deploy = NodeRecord("Deploy", {"service": "payment", "image_digest": "sha256:1",
                                   "deployed_at": NOW - 60}, {})  # fmt: skip
    batch = RecordBatch(
        nodes=[deploy], edges=[EdgeRecord("DEPLOYED", deploy.ref, payment, {}, "StaticInfra")]
    )
    with GraphIngestor(platform, who="test") as writer:
        writer.write(batch)
    walk = graph_neighbours(platform)
    assert None not in walk("payment", None) and "checkout" in walk("payment", None)
    assert feasible_path("payment", "checkout", {}, walk, None) == ("payment", "checkout")


def test_a_repair_that_paid_is_remembered_for_alike_alerts(
    platform: GraphStore, scripted_model: ScriptedModel, payment_repo: Path
) -> None:
    agent = model_run(platform, scripted_model, payment_repo,
                      path=["payment", "inventory", "checkout"])  # fmt: skip
    run = agent.investigate(ALERT, payment_plan(platform, ALERT),
                            ctx(platform, {"payment": payment_repo}))  # fmt: skip
    assert [r["patch"] for r in (run.audit or {})["repairs"]] == ["rebuild-path"]
    assert remembered(platform, ALERT) == []
    outcome = IncidentOutcome("fp-audit", ALERT, "checkout", NOW, run=run)
    batch = outcome_records(outcome)
    batch.edges = [e for e in batch.edges if e.type != "CITES"]  # no change lane ran here
    with GraphIngestor(platform, who="test") as writer:
        assert not writer.write(batch).rejected
    hints = remembered(platform, ALERT)
    assert [(h.stage, h.patch) for h in hints] == [("AS", "rebuild-path")] and hints[0].gain > 0
    other = Alert({"alertname": "HighLatency", "service": "checkout"}, starts_at=NOW)
    assert remembered(platform, other) == []
