"""The tool floor's contract: what the read path suggests is what the floor runs; no tool
takes a URL or host from the model; every tool has a timeout; a bad suggestion is reported."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from kube_apiserver import FakeKube, serve_kube
from sgtest import write_calls
from test_tool_kube import AT, WINDOW, cluster

from stackgraph.rca.agent import (
    DEFAULT_SUGGESTED,
    Agent,
    EvidenceSink,
    HypothesisState,
    ToolContext,
    ToolEvidence,
    ToolStatus,
    Verdict,
    call_tool,
    default_tools,
    floor_args,
    suggestion_problem,
)
from stackgraph.rca.agent.alike import Calls, graph_calls, no_calls
from stackgraph.rca.agent.floor import floor_conclusion
from stackgraph.rca.agent.http_get import HTTP_TIMEOUT_S
from stackgraph.rca.agent.report import build_report
from stackgraph.rca.agent.run import AgentRun, Ending
from stackgraph.rca.agent.tools_kube import API_TIMEOUT_S
from stackgraph.rca.model import Alert, Candidate, Evidence, Plan
from stackgraph.rca.outcome import IncidentOutcome
from stackgraph.rca.pipeline import suggested_tools
from stackgraph.store import GraphStore

TOOLS = default_tools()
KINDS = ("Service", "Datastore", "ExternalApi", "Node", "Queue")


def every_suggestion() -> set[str]:
    """Every list the read path can emit: each node kind × each mix of change evidence."""
    out: set[str] = set(DEFAULT_SUGGESTED)
    refs = ("Change:abc", "Deploy:payment@1", "Commit:x")
    for kind, n in itertools.product(KINDS, range(len(refs) + 1)):
        for picked in itertools.combinations(refs, n):
            evidence = [Evidence("change", "changed", "Git", ref=r) for r in picked]
            out.update(suggested_tools(kind, evidence))
    for ref in ("payment/cpu/cpu", "payment/memory/memory", "payment/latency/from:web"):
        out.update(suggested_tools("Service", [Evidence("anomaly", "rose", "Prometheus", ref=ref)]))
    return out


def test_every_read_path_suggestion_is_accepted_by_the_floor() -> None:
    emitted = every_suggestion()
    assert {"prometheus_query", "k8s_events", "git_log", "flux_status"} <= emitted
    assert {"prometheus_query:cpu", "prometheus_query:memory"} <= emitted
    for spec in sorted(emitted):
        assert suggestion_problem(TOOLS, spec, "payment") is None, spec
        name, _, arg = spec.partition(":")
        assert floor_args(name, arg, "payment"), spec  # each one runs at least one call


def test_bad_suggestions_are_named() -> None:
    assert "no tool named 'kubectl'" in str(suggestion_problem(TOOLS, "kubectl"))
    assert "must be one of" in str(suggestion_problem(TOOLS, "prometheus_query:disk"))
    assert "takes no ':x'" in str(suggestion_problem(TOOLS, "k8s_events:x"))
    assert "must match" in str(suggestion_problem(TOOLS, 'loki_query:a"b'))
    assert suggestion_problem(TOOLS, "prometheus_query:latency_p95") is None
    assert suggestion_problem(TOOLS, "loki_query:timeout") is None


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_no_tool_takes_a_url_or_host_and_each_has_a_timeout(name: str) -> None:
    tool = TOOLS[name]
    props = set(tool.parameters["properties"])
    assert not props & {"url", "host", "endpoint", "server", "namespace", "path", "query_text"}
    assert 0 < tool.timeout_s <= 30
    if tool.source in {"Prometheus", "Loki"}:
        assert tool.timeout_s > HTTP_TIMEOUT_S  # the request gives up before the tool does
    if name.startswith(("k8s_", "flux_")):
        assert tool.timeout_s > API_TIMEOUT_S
    nowhere = "http://127.0.0.1:9"
    ctx = ToolContext(store=object(), prometheus_url=nowhere, loki_url=nowhere,
                      repos={"payment": "/nonexistent"}, kube=object(),
                      memory=lambda q, n: [])  # fmt: skip
    for extra in ({"url": "http://evil"}, {"host": "evil"}, {"namespace": "kube-system"}):
        args = {"service": "payment", "signal": "error_rate", "sha": "abcdef1", "query": "q",
                **extra}  # fmt: skip
        known = {k: v for k, v in args.items() if k in props or k in extra}
        result = call_tool(tool, ctx, known)
        assert result.status == ToolStatus.INVALID_ARGUMENTS, (name, extra, result)
        assert "unknown argument" in result.summary


@pytest.fixture
def kube() -> Iterator[FakeKube]:
    with serve_kube(cluster()) as fake:
        yield fake


def test_the_floor_runs_the_read_path_suggestions(kube: FakeKube) -> None:
    """No model: payment, suggested what the read path gives a deployed Service, is
    validated by two tools; a suggestion the floor cannot run is reported, not dropped."""
    deploy = [Evidence("change", "deployed", "Flux", ref="Deploy:payment@1.4.3")]
    plan = Plan("checkout", [
        Candidate("payment", 0.8, {"blame": 0.8}, [["checkout", "payment"]],
                  suggested_tools=(*suggested_tools("Service", deploy), "prometheus_query:disk")),
        Candidate("cart", 0.4, {"blame": 0.4}, [["checkout", "cart"]],
                  suggested_tools=suggested_tools("Service", [])),
    ])  # fmt: skip
    alert = Alert({"alertname": "HighErrorRate", "service": "checkout"}, starts_at=AT)
    ctx = ToolContext(alert=alert, plan=plan, at=AT, window_s=WINDOW, kube=kube.api_client(),
                      kube_namespace="shop")  # fmt: skip
    run = Agent().investigate(alert, plan, ctx)
    payment = run.sink.hypotheses["payment"]
    assert {e.tool: str(e.verdict) for e in payment.evidence} == {
        "k8s_events": "supports",
        "flux_status": "supports",
    }
    assert payment.state == HypothesisState.VALIDATED
    assert run.conclusion == "payment"
    assert any("floor skipped suggested tool 'prometheus_query:disk'" in e for e in run.events)
    cart = run.sink.hypotheses["cart"]
    assert [(e.tool, str(e.verdict)) for e in cart.evidence] == [("k8s_events", "inconclusive")]


def test_the_floor_goes_down_the_plan_while_no_lead_stands(kube: FakeKube) -> None:
    """No model: the plan's top three show nothing; the floor does not stop there but checks
    the fourth, whose pod is crash-looping, and concludes it. Where a lead stands within the
    top three, the ones after it are not checked."""
    alert = Alert({"alertname": "HighErrorRate", "service": "checkout"}, starts_at=AT)

    def run(order: list[str]) -> tuple[str | None, dict[str, int]]:
        plan = Plan("checkout", [
            Candidate(who, 0.9 - i / 10, {"blame": 0.9 - i / 10}, [["checkout", who]],
                      suggested_tools=("k8s_events",))
            for i, who in enumerate(order)
        ])  # fmt: skip
        ctx = ToolContext(alert=alert, plan=plan, at=AT, window_s=WINDOW,
                          kube=kube.api_client(), kube_namespace="shop")  # fmt: skip
        out = Agent().investigate(alert, plan, ctx)
        return out.conclusion, {h: len(x.evidence) for h, x in out.sink.hypotheses.items()}

    conclusion, read = run(["cart", "search", "mail", "payment", "ledger"])
    assert conclusion == "payment"
    assert read["payment"] and not read["ledger"]  # it stopped once payment stood
    conclusion, read = run(["payment", "search", "mail", "cart", "ledger"])
    assert conclusion == "payment"
    assert not read["cart"] and not read["ledger"]


def test_a_lead_that_only_changed_does_not_end_the_search(kube: FakeKube) -> None:
    """No model: the plan's top three show nothing; cart, fifth, was released nine minutes
    before the alert, and its release is all that stands for it (nothing shows it failing).
    The floor does not stop at cart: it goes on to payment, fourth, whose pod is
    crash-looping, and concludes it. A lead seen failing ends the search as before."""
    alert = Alert({"alertname": "HighErrorRate", "service": "checkout"}, starts_at=AT)
    released = Evidence("change", "deployed", "Flux", ref="Deploy:cart@2", last_seen=AT - 530)

    def candidate(i: int, who: str) -> Candidate:
        evidence = [released] if who == "cart" else []
        tools = ("flux_status",) if who == "cart" else ("k8s_events",)
        return Candidate(who, 0.9 - i / 10, {"blame": 0.9 - i / 10}, [["checkout", who]],
                         evidence, suggested_tools=tools)  # fmt: skip

    def run(order: list[str]) -> tuple[str | None, dict[str, int]]:
        plan = Plan("checkout", [candidate(i, who) for i, who in enumerate(order)])
        ctx = ToolContext(alert=alert, plan=plan, at=AT, window_s=WINDOW,
                          kube=kube.api_client(), kube_namespace="shop")  # fmt: skip
        out = Agent().investigate(alert, plan, ctx)
        return out.conclusion, {h: len(x.evidence) for h, x in out.sink.hypotheses.items()}

    conclusion, read = run(["search", "mail", "sms", "payment", "cart", "ledger"])
    assert read["cart"] and read["payment"] and not read["ledger"]
    assert conclusion == "payment"
    conclusion, read = run(["search", "payment", "sms", "mail", "cart", "ledger"])
    assert conclusion == "payment" and not read["mail"] and not read["ledger"]


def test_of_leads_weighed_alike_the_floor_concludes_the_callee() -> None:
    """frontend and adservice each stand on one line: frontend's latency rose, and it calls
    adservice, whose latency or errors rose: adservice's fault explains frontend's symptom
    and is concluded, whatever the plan's order. A lead weighed more stays first. With no
    call between them, a callee that only changed or only used more cpu (no symptom calls
    carry), or a caller that changed itself or used more cpu itself (no symptom a callee
    explains), or two that call each other, the plan's order decides. A caller that only
    changed, its health never read, is no conclusion at all (`EvidenceSink.untested`)."""
    lat, err, logs = ("prometheus_query", "signal=latency_p95"), ("prometheus_query",
                      "signal=error_rate"), ("loki_query", "contains=error")  # fmt: skip
    cpu, git = ("prometheus_query", "signal=cpu"), ("git_log", "default")

    def sink(frontend: tuple[tuple[str, str], ...], other: tuple[tuple[str, str], ...],
             who: str = "adservice") -> EvidenceSink:  # fmt: skip
        out = EvidenceSink()
        for name, reads in (("frontend", frontend), (who, other)):
            out.ensure(name).evidence = [ToolEvidence(t, Verdict.SUPPORTS, "rose", "x",
                                                      check=c, hypothesis=name)
                                         for t, c in reads]  # fmt: skip
        return out

    calls = {"frontend": ("adservice", "cart")}
    graph = lambda s: calls.get(s, ())  # noqa: E731
    loop = lambda s: {"frontend": ("adservice",), "adservice": ("frontend",)}.get(s, ())  # noqa: E731
    assert floor_conclusion(sink((lat,), (lat,)), graph) == "adservice"
    assert floor_conclusion(sink((logs,), (err, cpu)), graph) == "adservice"
    assert floor_conclusion(sink((lat,), (lat,))) == "frontend"
    assert floor_conclusion(sink((lat, logs), (lat,)), graph) == "frontend"
    assert floor_conclusion(sink((lat,), (lat,), "email"), graph) == "frontend"
    assert floor_conclusion(sink((lat,), (git,)), graph) == "frontend"
    assert floor_conclusion(sink((lat,), (cpu,)), graph) == "frontend"
    assert floor_conclusion(sink((git, cpu), (lat,)), graph) == "frontend"
    assert floor_conclusion(sink((git,), (lat,)), graph) == "adservice"  # frontend unread
    assert floor_conclusion(sink((cpu,), (lat,)), graph) == "frontend"
    assert floor_conclusion(sink((lat,), (lat,)), loop) == "frontend"  # each explains the other


def test_the_tie_rule_reads_every_callee_of_a_gateway(store: GraphStore) -> None:
    """A gateway calls 25 services (Train Ticket's calls 40): the tie rule compares names,
    so it reads all of them, not the first 20 by name that bound a check's reads."""
    called = [f"svc-{i:02d}" for i in range(25)]
    write_calls(store, [("gateway", n) for n in called])
    alert = Alert({"alertname": "HighLatency", "service": "gateway"}, starts_at=AT)
    ctx = ToolContext(alert=alert, plan=Plan("gateway", []), at=AT, window_s=WINDOW,
                      store=store)  # fmt: skip
    assert sorted(graph_calls(ctx)("gateway")) == called
    out = EvidenceSink()
    for name in ("gateway", "svc-24"):
        out.ensure(name).evidence = [ToolEvidence("prometheus_query", Verdict.SUPPORTS, "rose",
                                                  "x", check="signal=latency_p95",
                                                  hypothesis=name)]  # fmt: skip
    assert floor_conclusion(out, graph_calls(ctx)) == "svc-24"


def test_a_conclusion_with_a_rival_is_not_validated() -> None:
    """payment and price each stand Validated, alike, on two lines (metrics and logs), and
    neither calls the other: the evidence does not tell them apart, the plan's rank chose,
    so the conclusion is Supported, names its rival, is calibrated as Supported and writes
    no root cause. Where payment calls price, price explains payment's calls and stands
    alone: Validated. A lead weighed less is no rival."""
    lines = (("prometheus_query", "signal=latency_p95"), ("loki_query", "contains=error"))

    def sink(price: tuple[tuple[str, str], ...]) -> EvidenceSink:
        out = EvidenceSink()
        for name, reads in (("payment", lines), ("price", price)):
            out.ensure(name).evidence = [ToolEvidence(t, Verdict.SUPPORTS, "rose", "x",
                                                      check=c, hypothesis=name)
                                         for t, c in reads]  # fmt: skip
        return out

    def concluded(s: EvidenceSink, calls: Calls = no_calls) -> AgentRun:
        conclusion = floor_conclusion(s, calls)
        report = build_report(Alert({"service": "gateway"}), s, "concluded", conclusion,
                              calls=calls)  # fmt: skip
        return AgentRun(Ending.CONCLUDED, conclusion, s, report)

    def outcome(run: AgentRun) -> IncidentOutcome:
        return IncidentOutcome("fp", Alert({"service": "gateway"}), "gateway", AT, run=run)

    both = sink(lines)
    assert {h.state for h in both.hypotheses.values()} == {HypothesisState.VALIDATED}
    run = concluded(both)
    assert run.conclusion == "payment" and run.conclusion_state == "Supported"
    assert "price stood as well on the evidence" in run.report.summary, run.report.summary
    assert outcome(run).root_cause is None
    calls = {"payment": ("price",)}
    run = concluded(sink(lines), lambda s: calls.get(s, ()))
    assert run.conclusion == "price" and run.conclusion_state == "Validated"
    assert "stood as well" not in run.report.summary
    assert outcome(run).root_cause == "price"
    run = concluded(sink(lines[:1]))
    assert run.conclusion == "payment" and run.conclusion_state == "Validated"
    assert outcome(run).root_cause == "payment"
