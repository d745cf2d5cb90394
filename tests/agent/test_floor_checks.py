"""What the deterministic floor checks, with no model: the Tempo edges the plan ranked on
(query_stack_graph, suggested first), and in a monorepo only the suspect's own commits."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from stackgraph.ingest import GraphIngestor
from stackgraph.rca import Alert, investigate
from stackgraph.rca.agent import Agent, AgentConfig, ToolContext, ToolStatus, Verdict, call_tool
from stackgraph.rca.agent import default_tools as tools
from stackgraph.rca.agent.tools_git import service_path
from stackgraph.rca.model import Candidate, Evidence, Plan
from stackgraph.rca.pipeline import suggested_tools
from stackgraph.schema import EdgeRecord, NodeRecord, NodeRef, RecordBatch
from stackgraph.store import GraphStore

T0 = 1_800_000_000.0


def svc(name: str) -> NodeRef:
    return NodeRef("Service", {"name": name})


def test_telemetry_evidence_leads_with_query_stack_graph() -> None:
    edge = Evidence("telemetry", "checkout→payment error rate 14%", "Tempo", 0.8,
                    "CALLS:checkout->payment")  # fmt: skip
    deploy = Evidence("change", "deployed", "Flux", ref="Deploy:payment:1.9.2")
    assert suggested_tools("Service", [edge, deploy]) == (
        "query_stack_graph", "prometheus_query", "k8s_events", "flux_status",
    )  # fmt: skip
    assert "query_stack_graph" not in suggested_tools("Service", [deploy])


def test_a_candidate_with_log_lines_gets_the_log_check() -> None:
    """The plan read log lines of it (or voted on them): `loki_query` checks them."""
    burst = Evidence("logs", "14 error line(s) in the alert window", "logs", 4.4, "logs:payment")
    assert "loki_query" in suggested_tools("Service", [burst])
    assert "loki_query" in suggested_tools("Service", [], has_logs=True)
    assert "loki_query" not in suggested_tools("Service", [])


def test_the_floor_verifies_the_plan_on_the_tempo_edges(store: GraphStore) -> None:
    """No Prometheus, cluster or Git: the failing callee is supported by its edges, the
    healthy one refuted, and the floor concludes on the graph's own evidence."""
    names = ("frontend", "checkout", "payment", "cart")
    telemetry = RecordBatch(nodes=[NodeRecord("Service", {"name": n}) for n in names], edges=[
        EdgeRecord("CALLS", svc("frontend"), svc("checkout"),
                   {"error_rate": 0.09, "latency_p95_ms": 1440.0, "trace_count": 900}, "Tempo"),
        EdgeRecord("CALLS", svc("checkout"), svc("payment"),
                   {"error_rate": 0.14, "latency_p95_ms": 1540.0, "trace_count": 800}, "Tempo"),
        EdgeRecord("CALLS", svc("checkout"), svc("cart"),
                   {"error_rate": 0.0, "latency_p95_ms": 7.0, "trace_count": 700}, "Tempo"),
    ])  # fmt: skip
    with GraphIngestor(store, who="test") as writer:
        assert not writer.write(telemetry).rejected
    alert = Alert({"alertname": "HighErrorRate", "service": "checkout"}, starts_at=T0)
    plan = investigate(store, alert, at=T0 + 300)
    by = {c.service: c for c in plan.candidates}
    assert by["payment"].suggested_tools[0] == "query_stack_graph"
    assert plan.candidates[0].service == "payment"
    ctx = ToolContext(store=store, alert=alert, plan=plan, at=T0)
    run = Agent(AgentConfig(top_k=len(plan.candidates))).investigate(alert, plan, ctx)
    verdicts = {
        h.suspect: {e.tool: e.verdict for e in h.evidence} for h in run.sink.hypotheses.values()
    }
    assert verdicts["payment"] == {"query_stack_graph": Verdict.SUPPORTS}
    assert verdicts["cart"] == {"query_stack_graph": Verdict.REFUTES}
    assert run.conclusion == "payment"


def git(repo: Path, *args: str, when: float | None = None) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
           "GIT_COMMITTER_NAME": "dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}  # fmt: skip
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{int(when)} +0000"
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)


def monorepo(root: Path) -> Path:
    """services/{checkout,payment}/ and a top-level cart/; payment's PR (a branch commit
    merged 20 min before T0) is the only recent change."""
    repo = root / "shop"
    for folder in ("services/checkout", "services/payment", "cart"):
        (repo / folder).mkdir(parents=True)
        (repo / folder / "main.py").write_text("TIMEOUT = 2\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "initial import", when=T0 - 86400 * 10)
    git(repo, "checkout", "-qb", "payment-timeouts")
    (repo / "services/payment/main.py").write_text("TIMEOUT = 10\n")
    git(repo, "commit", "-qam", "raise the charge timeout", when=T0 - 86400)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge pull request #17", "payment-timeouts",
        when=T0 - 1200)  # fmt: skip
    return repo


def test_git_checks_read_only_the_suspects_folder(tmp_path: Path) -> None:
    repo = monorepo(tmp_path)
    assert service_path(repo, "payment") == "services/payment/"
    assert service_path(repo, "cart") == "cart/"
    assert service_path(repo, "billing") == ""  # not in the layout: the whole repository
    ctx = ToolContext(repos={"payment": repo, "checkout": repo}, at=T0, window_s=1800.0)
    log, show = tools()["git_log"], tools()["git_show"]
    pay = call_tool(log, ctx, {"service": "payment"})
    assert pay.status == ToolStatus.SUCCESS and "shop:services/payment/" in pay.summary
    assert [c["subject"] for c in pay.data["recent"]] == ["Merge pull request #17"]
    assert log.check(pay, "payment", T0, 1800.0) == Verdict.SUPPORTS
    out = call_tool(log, ctx, {"service": "checkout"})
    assert [c["subject"] for c in out.data["commits"]] == ["initial import"]
    assert log.check(out, "checkout", T0, 1800.0) == Verdict.INCONCLUSIVE
    merge = str(pay.data["recent"][0]["sha"])
    shown = call_tool(show, ctx, {"service": "payment", "sha": merge})
    assert shown.status == ToolStatus.SUCCESS and "1 file changed" in shown.summary
    other = call_tool(show, ctx, {"service": "checkout", "sha": merge})
    assert other.status == ToolStatus.NO_DATA and "services/checkout/" in other.summary
    assert show.check(other, "checkout", T0, 1800.0) == Verdict.INCONCLUSIVE
    # the floor: payment supported by its own PR (git_log and git_show read the same
    # commits: one line of evidence, not enough to validate), checkout not by payment's
    plan = Plan("checkout", [
        Candidate("payment", 0.6, {"blame": 0.6}, suggested_tools=("git_log",)),
        Candidate("checkout", 0.3, {"blame": 0.3}, suggested_tools=("git_log",)),
    ])  # fmt: skip
    alert = Alert({"alertname": "HighErrorRate", "service": "checkout"}, starts_at=T0)
    ctx.alert, ctx.plan = alert, plan
    run = Agent().investigate(alert, plan, ctx)
    states = {h.suspect: str(h.state) for h in run.hypotheses}
    assert states == {"payment": "Supported", "checkout": "Candidate"}
    assert run.conclusion == "payment"
    assert run.sink.hypotheses["payment"].confidence == 0.667  # one line for, none against


def test_graph_check_follows_the_failure_to_its_frontier() -> None:
    """checkout's callers fail (9%) but its own calls to payment fail harder (14%): it
    passes the failure on, so the graph does not support it; payment, whose calls out are
    healthy, is supported."""
    from stackgraph.rca.agent.toolbox import ToolResult
    from stackgraph.rca.agent.tools_graph import _check_graph

    def calls(src: str, dst: str, errors: float) -> dict[str, object]:
        props = {"error_rate": errors, "latency_p95_ms": 100.0, "status": "Active"}
        return {"type": "CALLS", "src": src, "dst": dst, "props": props}

    triples = [
        calls("frontend", "checkout", 0.09),
        calls("checkout", "payment", 0.14),
        calls("payment", "stripe", 0.0),
    ]
    result = ToolResult(ToolStatus.SUCCESS, "", {"triples": triples})
    assert _check_graph(result, "checkout", T0, 1800.0) == Verdict.INCONCLUSIVE
    assert _check_graph(result, "payment", T0, 1800.0) == Verdict.SUPPORTS
    assert _check_graph(result, "stripe", T0, 1800.0) == Verdict.REFUTES
    for unmeasured in ("error_rate", "latency_p95_ms"):  # half a measure is no health
        half = [{**t, "props": {k: v for k, v in t["props"].items() if k != unmeasured}}
                for t in triples]  # fmt: skip
        blind = ToolResult(ToolStatus.SUCCESS, "", {"triples": half})
        assert _check_graph(blind, "stripe", T0, 1800.0) == Verdict.INCONCLUSIVE, unmeasured
    assert _check_graph(blind, "payment", T0, 1800.0) == Verdict.SUPPORTS  # errors measured


def test_a_change_of_a_service_it_calls_explains_a_callers_change(
    tmp_path: Path, store: GraphStore
) -> None:
    """checkout and payment both released in the window, checkout calls payment: payment's
    change explains checkout's symptoms as well as checkout's own, so Git supports payment
    and is inconclusive for checkout, naming payment. Without the call, each change
    supports its own service."""
    repo = monorepo(tmp_path)
    (repo / "services/checkout/main.py").write_text("RETRIES = 3\n")
    git(repo, "commit", "-qam", "retry the payment call", when=T0 - 600)
    ctx = ToolContext(store=store, repos={"payment": repo, "checkout": repo}, at=T0)
    log, show = tools()["git_log"], tools()["git_show"]
    alone = call_tool(log, ctx, {"service": "checkout"})
    assert alone.data["callees_released"] == []
    assert log.check(alone, "checkout", T0, ctx.window_s) == Verdict.SUPPORTS

    calls = RecordBatch(nodes=[NodeRecord("Service", {"name": n}) for n in ("checkout",
                        "payment")], edges=[EdgeRecord("CALLS", svc("checkout"),
                        svc("payment"), {"trace_count": 10}, "Tempo")])  # fmt: skip
    with GraphIngestor(store, who="test") as writer:
        assert not writer.write(calls).rejected
    out = call_tool(log, ctx, {"service": "checkout"})
    assert out.data["callees_released"] == ["payment"]
    assert "services it calls: payment" in out.summary
    assert log.check(out, "checkout", T0, ctx.window_s) == Verdict.INCONCLUSIVE
    sha = str(out.data["recent"][0]["sha"])
    shown = call_tool(show, ctx, {"service": "checkout", "sha": sha})
    assert show.check(shown, "checkout", T0, ctx.window_s) == Verdict.INCONCLUSIVE
    pay = call_tool(log, ctx, {"service": "payment"})
    assert log.check(pay, "payment", T0, ctx.window_s) == Verdict.SUPPORTS

    broken = tmp_path / "not-a-checkout"  # a callee whose history cannot be read
    broken.mkdir()
    ctx = ToolContext(store=store, repos={"payment": broken, "checkout": repo}, at=T0)
    out = call_tool(log, ctx, {"service": "checkout"})
    assert out.status == ToolStatus.SUCCESS and out.data["callees_unread"] == ["payment"]
    assert "the history of payment, which it calls, could not be read" in out.summary
    assert log.check(out, "checkout", T0, ctx.window_s) == Verdict.SUPPORTS


def test_what_changed_before_the_alert_is_checked_whatever_its_rank(tmp_path: Path) -> None:
    """payment's PR merged 20 min before the alert, but the plan ranks payment last: the
    floor checks its top lead and then every candidate that changed in the window its
    change checks read, and concludes on payment's release. A change older than that
    window is no lead of its own: cart is read only as the plan's next lead."""
    repo = monorepo(tmp_path)
    ctx = ToolContext(repos={"payment": repo, "checkout": repo, "cart": repo}, at=T0,
                      window_s=1800.0)  # fmt: skip

    def released(at: float, service: str) -> Evidence:
        return Evidence("change", "released", "Git", 0.0, f"Change:{service}:pr", "Active", at)

    plan = Plan("checkout", [
        Candidate("checkout", 0.6, {"blame": 0.6}, suggested_tools=("git_log",)),
        Candidate("cart", 0.3, {"blame": 0.3}, evidence=(released(T0 - 7200, "cart"),),
                  suggested_tools=("git_log",)),
        Candidate("payment", 0.1, {"change": 0.1}, evidence=(released(T0 - 1200, "payment"),),
                  suggested_tools=("git_log",)),
    ])  # fmt: skip
    alert = Alert({"alertname": "HighErrorRate", "service": "checkout"}, starts_at=T0)
    ctx.alert, ctx.plan = alert, plan
    run = Agent(AgentConfig(top_k=1)).investigate(alert, plan, ctx)
    assert {h.suspect for h in run.hypotheses if h.evidence} == {"checkout", "payment", "cart"}
    # cart changed 2 h ago, outside the window: it is checked only as the plan's next lead,
    # since payment stands on its release alone (nothing shows it failing)
    assert any(e.startswith("floor: no lead stands on a fault seen, checking cart")
               for e in run.events), run.events  # fmt: skip
    assert run.conclusion == "payment"
