"""The agent's state machine, driven by a scripted model through the real `ollama` client,
and its deterministic floor without a model."""

from __future__ import annotations

import json
import time
from pathlib import Path

from kube_apiserver import FakeKube

from stackgraph.rca.agent import (
    PLAN_HEADER,
    ROOT_CAUSE_MIN_CONFIDENCE,
    Agent,
    AgentConfig,
    Ending,
    HypothesisState,
    ToolContext,
    Verdict,
)
from stackgraph.rca.agent.audit.critic import CRITIC_PROMPT
from stackgraph.rca.model import Alert
from stackgraph.store import GraphStore

from .conftest import ScriptedModel, call, kube_args, payment_plan

ALERT = Alert({"alertname": "HighErrorRate", "service": "checkout"},
              {"summary": "checkout 5xx > 5%"}, time.time(), "fp1")  # fmt: skip


def ctx(
    store: GraphStore, repos: dict[str, Path] | None = None, kube: FakeKube | None = None
) -> ToolContext:
    return ToolContext(store=store, alert=ALERT, at=time.time(), repos=repos or {},
                       **kube_args(kube))  # fmt: skip


def agent(model: ScriptedModel, steps: int = 6) -> Agent:
    return Agent(AgentConfig(ollama_host=model.url, model="scripted", max_steps=steps))


def test_plan_seeds_the_prompt_under_the_leads_header(
    platform: GraphStore, scripted_model: ScriptedModel
) -> None:
    scripted_model.script = [call("insufficient_evidence", reason="nothing to check")]
    run = agent(scripted_model).investigate(ALERT, payment_plan(platform, ALERT), ctx(platform))
    assert run.ending == Ending.INSUFFICIENT_EVIDENCE
    first = scripted_model.requests[0]
    user = first["messages"][1]["content"]
    assert PLAN_HEADER in user
    assert "prioritised leads to confirm, not conclusions" in user
    assert json.dumps(payment_plan(platform, ALERT).to_dict(), indent=1) in user
    offered = {t["function"]["name"] for t in first["tools"]}
    assert {"query_stack_graph", "memory_lookup", "conclude"} <= offered
    assert "prometheus_query" not in offered  # no Prometheus configured: prerequisite off


def test_conclusion_without_evidence_is_refused(
    platform: GraphStore, scripted_model: ScriptedModel
) -> None:
    scripted_model.script = [
        call("conclude", service="payment", summary="payment is down, trust me"),
        call("query_stack_graph", service="payment"),
        call("conclude", service="payment", summary="calls into payment fail at 12%"),
    ]
    run = agent(scripted_model).investigate(ALERT, payment_plan(platform, ALERT), ctx(platform))
    assert any("conclusion 'payment' refused (state Candidate)" in e for e in run.events)
    assert "Refused: payment is Candidate." in scripted_model.requests[1]["messages"][-1]["content"]
    assert run.ending == Ending.CONCLUDED and run.conclusion == "payment"
    payment = run.sink.hypotheses["payment"]
    assert [e.verdict for e in payment.evidence] == [Verdict.SUPPORTS]
    assert "error rate 12%" in payment.evidence[0].result_summary
    assert payment.state == HypothesisState.SUPPORTED


def test_invented_evidence_is_rejected_at_the_sink(
    platform: GraphStore, scripted_model: ScriptedModel
) -> None:
    scripted_model.script = [
        call("conclude", service="inventory", summary="inventory leaks memory",
             evidence=["inventory pods OOMKilled 14 times", "p95 4 s"]),
        call("insufficient_evidence", reason="gave up"),
    ]  # fmt: skip
    run = agent(scripted_model).investigate(ALERT, payment_plan(platform, ALERT), ctx(platform))
    assert len(run.sink.rejected) == 2
    assert all(ev.source == "LlmInferred" for ev, _ in run.sink.rejected)
    assert run.sink.hypotheses["inventory"].evidence == []
    assert run.sink.hypotheses["inventory"].state == HypothesisState.CANDIDATE
    assert run.ending == Ending.INSUFFICIENT_EVIDENCE and run.conclusion is None
    assert "rejected evidence" in run.report.text()


def test_a_looping_model_is_stopped_by_the_step_budget(
    platform: GraphStore, scripted_model: ScriptedModel
) -> None:
    scripted_model.script = [call("query_stack_graph", service="inventory")]
    run = agent(scripted_model, steps=4).investigate(ALERT, payment_plan(platform, ALERT),
                                                     ctx(platform))  # fmt: skip
    assert run.ending == Ending.BUDGET_EXHAUSTED and run.steps == 4
    # four turns of the loop, then one to the stage critic (the audit did not pass)
    assert len(scripted_model.requests) == 5
    assert scripted_model.requests[4]["messages"][0]["content"] == CRITIC_PROMPT
    assert "Insufficient evidence" in run.report.summary


def test_wall_clock_budget(platform: GraphStore, scripted_model: ScriptedModel) -> None:
    ticks = iter(range(0, 10_000, 100))
    scripted_model.script = [call("query_stack_graph", service="inventory")]
    a = Agent(AgentConfig(ollama_host=scripted_model.url, max_steps=50, wall_clock_s=250),
              clock=lambda: float(next(ticks)))  # fmt: skip
    run = a.investigate(ALERT, payment_plan(platform, ALERT), ctx(platform))
    assert run.ending == Ending.BUDGET_EXHAUSTED
    assert any("wall-clock budget" in e for e in run.events)
    assert len(scripted_model.requests) < 50


def test_raw_json_in_text_unknown_tools_and_malformed_calls_are_handled(
    platform: GraphStore, scripted_model: ScriptedModel
) -> None:
    scripted_model.script = [
        {"content": "I will check.\n```json\n{\"name\": \"query_stack_graph\", "
                    "\"arguments\": {\"service\": \"payment\"}}\n```"},
        call("kubectl_exec", command="rm -rf /"),
        {"tool_calls": [{"function": {"name": "query_stack_graph", "arguments": "{oops"}}]},
        call("query_stack_graph", service="pay'ment\" OR 1=1"),
        {"content": "payment looks broken"},
        {"content": '{"tool": "conclude", "parameters": {"service": "payment", '
                    '"summary": "12% errors into payment"}}'},
    ]  # fmt: skip
    run = agent(scripted_model, steps=10).investigate(ALERT, payment_plan(platform, ALERT),
                                                      ctx(platform))  # fmt: skip
    events = "\n".join(run.events)
    assert "parsed from raw JSON in text" in events
    assert "unknown tool 'kubectl_exec'" in events
    assert "malformed model reply" in events
    assert "no tool call" in events
    invalid = [m["content"] for r in scripted_model.requests for m in r["messages"]
               if m["role"] == "tool" and "invalid_arguments" in m["content"]]  # fmt: skip
    assert invalid and "not a valid name" in invalid[0]
    assert run.ending == Ending.CONCLUDED and run.conclusion == "payment"


def test_model_down_falls_back_to_the_floor(platform: GraphStore, payment_repo: Path) -> None:
    a = Agent(AgentConfig(ollama_host="http://127.0.0.1:9", max_steps=3))
    run = a.investigate(ALERT, payment_plan(platform, ALERT),
                        ctx(platform, {"payment": payment_repo}))  # fmt: skip
    assert any("model unavailable" in e for e in run.events)
    assert run.conclusion == "payment"


def test_floor_without_a_model_verifies_and_reports(
    platform: GraphStore, payment_repo: Path, payment_kube: FakeKube
) -> None:
    """The graph's check re-reads the facts the plan was ranked on, so graph + Git is one
    line of evidence (Supported, concluded but no root cause); Kubernetes beside Git makes
    two (Validated)."""
    run = Agent().investigate(ALERT, payment_plan(platform, ALERT),
                              ctx(platform, {"payment": payment_repo}))  # fmt: skip
    assert not run.llm_used
    payment = run.sink.hypotheses["payment"]
    tools = {e.tool: e.verdict for e in payment.evidence}
    assert tools == {"query_stack_graph": Verdict.SUPPORTS, "git_log": Verdict.SUPPORTS,
                     "git_show": Verdict.SUPPORTS}  # fmt: skip
    assert payment.state == HypothesisState.SUPPORTED
    both = Agent().investigate(ALERT, payment_plan(platform, ALERT),
                               ctx(platform, {"payment": payment_repo}, payment_kube))  # fmt: skip
    validated = both.sink.hypotheses["payment"]
    assert {e.tool: e.verdict for e in validated.evidence}["k8s_pod_status"] == Verdict.SUPPORTS
    assert validated.state == HypothesisState.VALIDATED
    assert validated.confidence >= ROOT_CAUSE_MIN_CONFIDENCE
    assert validated.confidence > payment.confidence
    inventory = run.sink.hypotheses["inventory"]
    assert inventory.state == HypothesisState.REFUTED  # healthy measured calls into it
    assert run.ending == Ending.CONCLUDED and run.conclusion == "payment"
    report = run.report
    assert [d["suspect"] for d in report.diagnosis][:2] == ["payment", "inventory"]
    assert "HighErrorRate on checkout" in report.summary
    assert "lower the charge timeout to 50 ms" in report.summary
    assert [a.kind for a in report.actions] == ["immediate", "permanent", "prevention"]
    assert "Roll back payment" in report.actions[0].text
    assert all(a.because for a in report.actions)


def test_floor_with_nothing_to_go_on_says_insufficient_evidence(store: GraphStore) -> None:
    run = Agent().investigate(ALERT, payment_plan(store, ALERT), ctx(store))
    assert run.ending == Ending.INSUFFICIENT_EVIDENCE and run.conclusion is None
    assert all(h.state == HypothesisState.CANDIDATE for h in run.hypotheses)
    assert "Insufficient evidence" in run.report.summary
