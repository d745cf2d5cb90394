"""Independence of evidence is counted by data source: the graph re-reads the facts the
plan was ranked on and is no line towards Validated; tools on one source count once."""

from __future__ import annotations

import pytest

from stackgraph.rca.agent import (
    ROOT_CAUSE_MIN_CONFIDENCE,
    EvidenceSink,
    Hypothesis,
    HypothesisState,
    ToolEvidence,
    Verdict,
    default_tools,
)
from stackgraph.rca.agent.evidence import DATA_SOURCE, GRAPH
from stackgraph.rca.agent.floor import floor_conclusion
from stackgraph.rca.agent.report import build_report
from stackgraph.rca.model import Alert

S, R, N = Verdict.SUPPORTS, Verdict.REFUTES, Verdict.INCONCLUSIVE


def hyp(*checks: tuple[str, Verdict], prior: float = 0.5) -> Hypothesis:
    h = Hypothesis("payment", 1, prior)
    h.evidence = [ToolEvidence(tool, v, f"{tool}: {v}", "Test", hypothesis="payment")
                  for tool, v in checks]  # fmt: skip
    return h


def test_graph_plus_git_is_supported_git_plus_metrics_is_validated() -> None:
    graph_git = hyp(("query_stack_graph", S), ("git_log", S))
    assert graph_git.state == HypothesisState.SUPPORTED
    git_metrics = hyp(("git_log", S), ("prometheus_query", S))
    assert git_metrics.state == HypothesisState.VALIDATED
    assert git_metrics.confidence > graph_git.confidence >= ROOT_CAUSE_MIN_CONFIDENCE


def test_a_released_suspects_cpu_is_its_release_seen_again() -> None:
    """A rollout moves cpu and memory by construction: beside the suspect's own release, a
    cpu rise is no second line (Supported at 2/3, not Validated at 3/4), and its healthy
    latency is no line against. Its errors rising are a second line."""

    def released(*metrics: tuple[str, Verdict]) -> Hypothesis:
        h = hyp(("git_log", S))
        h.evidence += [ToolEvidence("prometheus_query", v, "", "Test", check=f"signal={sig}",
                                    hypothesis="payment") for sig, v in metrics]  # fmt: skip
        return h

    footprint = released(("cpu", S), ("memory", S), ("latency_p95", R))
    assert footprint.state == HypothesisState.SUPPORTED
    assert footprint.confidence == hyp(("git_log", S)).confidence
    failing = released(("cpu", S), ("error_rate", S))
    assert failing.state == HypothesisState.VALIDATED
    unreleased = hyp(("k8s_events", S))
    unreleased.evidence.append(ToolEvidence("prometheus_query", S, "", "Test",
                                            check="signal=cpu", hypothesis="payment"))  # fmt: skip
    assert unreleased.state == HypothesisState.VALIDATED


@pytest.mark.parametrize(
    ("checks", "state"),
    [
        ((("query_stack_graph", S),), HypothesisState.SUPPORTED),
        ((("git_log", S), ("git_show", S)), HypothesisState.SUPPORTED),
        ((("git_log", S), ("flux_status", S)), HypothesisState.SUPPORTED),  # both: change
        # both read logs; the graph adds no line
        ((("loki_query", S), ("k8s_logs", S), ("query_stack_graph", S)), HypothesisState.SUPPORTED),
        ((("k8s_events", S), ("k8s_pod_status", S)), HypothesisState.SUPPORTED),
        ((("k8s_events", S), ("flux_status", S)), HypothesisState.VALIDATED),
        ((("loki_query", S), ("prometheus_query", S)), HypothesisState.VALIDATED),
        ((("git_log", S), ("memory_lookup", S)), HypothesisState.SUPPORTED),
        ((("git_log", S), ("some_new_tool", S)), HypothesisState.VALIDATED),  # its own source
        # a refutation blocks Validated
        (
            (("git_log", S), ("prometheus_query", S), ("k8s_pod_status", R)),
            HypothesisState.SUPPORTED,
        ),
        # once an independent source judged, the graph's re-read decides nothing
        ((("query_stack_graph", R), ("git_log", S)), HypothesisState.SUPPORTED),
        ((("query_stack_graph", S), ("prometheus_query", R)), HypothesisState.REFUTED),
        ((("query_stack_graph", R), ("memory_lookup", S)), HypothesisState.REFUTED),
        ((("query_stack_graph", R), ("git_log", N)), HypothesisState.REFUTED),
        # two tools on one source against one measurement: one line each, refuted
        ((("git_log", S), ("git_show", S), ("prometheus_query", R)), HypothesisState.REFUTED),
        ((("git_log", S), ("git_show", S), ("prometheus_query", S)), HypothesisState.VALIDATED),
        ((("query_stack_graph", N), ("git_log", N)), HypothesisState.CANDIDATE),
        # a fault shows in some signals: a healthy one does not refute what another shows
        ((("prometheus_query", S), ("loki_query", R)), HypothesisState.SUPPORTED),
        ((("loki_query", S), ("prometheus_query", R)), HypothesisState.SUPPORTED),
        (
            (("k8s_pod_status", S), ("prometheus_query", R), ("loki_query", R)),
            HypothesisState.SUPPORTED,
        ),
        # a change alone shows nothing failing: a healthy measurement weighs as much
        ((("git_log", S), ("loki_query", R)), HypothesisState.REFUTED),
    ],
)
def test_lines_are_data_sources(
    checks: tuple[tuple[str, Verdict], ...], state: HypothesisState
) -> None:
    assert hyp(*checks).state == state


def test_a_healthy_signal_is_no_trial_of_a_fault_another_shows() -> None:
    """CPU doubled, and the logs hold no error line: the service is saturated, not failing
    by errors. The quiet logs keep it from Validated, and count nothing against it: it
    stands as the CPU alone would, not below a suspect whose logs were never read."""
    h = hyp(("prometheus_query", S), ("loki_query", R), ("git_log", S), prior=0.0)
    assert h.state == HypothesisState.SUPPORTED
    assert h.confidence == pytest.approx(3 / 4, abs=1e-3)
    quiet_logs = hyp(("prometheus_query", S), ("loki_query", R))
    assert quiet_logs.confidence == hyp(("prometheus_query", S)).confidence
    assert quiet_logs.confidence == pytest.approx(2 / 3, abs=1e-3)
    # a change alone is no fault seen: the healthy reading still counts against it
    assert hyp(("git_log", S), ("loki_query", R)).confidence == pytest.approx(0.5)


def test_the_graph_decides_nothing_once_an_independent_source_judged() -> None:
    """Its re-read of the plan's facts is no news next to a measurement, and neither is a
    second tool on the same source; against, it is an objection: it blocks Validated but
    neither refutes nor counts as a measurement against."""
    git = hyp(("git_log", S), prior=0.0)
    with_graph = hyp(("git_log", S), ("query_stack_graph", S), prior=0.0)
    with_show = hyp(("git_log", S), ("git_show", S), prior=0.0)
    against_graph = hyp(("git_log", S), ("query_stack_graph", R), prior=0.0)
    assert against_graph.state == HypothesisState.SUPPORTED
    assert git.confidence == with_graph.confidence == with_show.confidence
    assert git.confidence == against_graph.confidence
    objected = hyp(("git_log", S), ("prometheus_query", S), ("query_stack_graph", R))
    assert objected.state == HypothesisState.SUPPORTED
    assert objected.confidence == pytest.approx(3 / 4, abs=1e-3)
    # the plan's own facts alone say no more than the plan's prior
    assert hyp(("query_stack_graph", S), prior=1.0).confidence <= 0.1


@pytest.mark.parametrize(
    ("checks", "confidence"),
    [
        ((("git_log", S),), 2 / 3),  # rule of succession: (1 + 1) / (1 + 0 + 2)
        ((("git_log", S), ("prometheus_query", S)), 3 / 4),
        ((("git_log", S), ("prometheus_query", S), ("loki_query", S)), 4 / 5),
        ((("git_log", S), ("prometheus_query", S), ("k8s_events", R)), 3 / 4),  # no trial
        ((("git_log", S), ("prometheus_query", R)), 1 / 2),  # Refuted: at most a half
        ((("prometheus_query", R),), 0.1 * 0.5),  # no line for: the prior's share
    ],
)
def test_confidence_is_the_rule_of_succession_over_sources(
    checks: tuple[tuple[str, Verdict], ...], confidence: float
) -> None:
    assert hyp(*checks).confidence == pytest.approx(confidence, abs=1e-3)


def test_every_tool_of_the_floor_names_its_data_source() -> None:
    tools = default_tools()
    assert set(tools) <= set(DATA_SOURCE)
    assert DATA_SOURCE["query_stack_graph"] == GRAPH
    assert [name for name, source in DATA_SOURCE.items() if source == GRAPH] == [
        "query_stack_graph"
    ]


def test_the_graph_alone_concludes_only_where_no_tool_could_verify() -> None:
    """The graph proposes, tools verify: once a source beyond the graph and memory judged any
    suspect, a conclusion needs such a source for it; with the graph alone, its check is all
    the checking there is."""
    sink = EvidenceSink()
    payment = sink.ensure("payment")
    payment.evidence = [ToolEvidence("query_stack_graph", S, "calls fail", "Tempo",
                                     hypothesis="payment")]  # fmt: skip
    assert payment.state == HypothesisState.SUPPORTED and not payment.verified
    assert sink.concludable(payment)  # nothing else could judge
    cart = sink.ensure("cart")
    cart.evidence = [ToolEvidence("prometheus_query", N, "no data", "Prometheus",
                                  hypothesis="cart")]  # fmt: skip
    assert sink.concludable(payment)  # a tool ran, but judged nothing
    cart.evidence.append(ToolEvidence("loki_query", R, "no error lines", "Loki",
                                      hypothesis="cart"))  # fmt: skip
    assert not sink.concludable(payment)  # logs could judge, and none spoke for payment
    payment.evidence.append(ToolEvidence("git_log", S, "a release", "Git", hypothesis="payment"))
    assert payment.verified and not sink.concludable(payment)  # its health never read
    payment.evidence.append(ToolEvidence("loki_query", N, "no error lines yet", "Loki",
                                         hypothesis="payment"))  # fmt: skip
    assert sink.concludable(payment)
    assert not sink.concludable(cart)  # Refuted


def test_a_change_no_health_reading_could_test_is_named_not_concluded() -> None:
    """A release on a service nothing measures was never open to refutation: where metrics
    read other suspects, it is a lead in the report, not the conclusion, and the next lead
    that a reading supports is. Read healthy-but-too-soon, or with no source of health
    configured at all, the release alone still concludes; so does one seen failing."""

    def suspect(name: str, *checks: tuple[str, Verdict, str]) -> Hypothesis:
        h = Hypothesis(name, 1, 0.5)
        h.evidence = [ToolEvidence(tool, v, f"{tool}: {v}", "Test", hypothesis=name,
                                   status=status) for tool, v, status in checks]  # fmt: skip
        return h

    git, no_data = ("git_log", S, "success"), ("prometheus_query", N, "no_data")
    unread = suspect("queue-master", git, no_data)
    front = suspect("front-end", ("prometheus_query", R, "success"))
    sink = EvidenceSink({"queue-master": unread, "front-end": front})
    assert unread.state == HypothesisState.SUPPORTED and unread.verified
    why = sink.unconcludable(unread)
    assert why is not None and "queue-master rests on a change alone" in why, why
    assert floor_conclusion(sink) is None
    report = build_report(Alert({"service": "front-end"}), sink, "insufficient_evidence", None)
    assert why in report.notes
    carts = suspect("carts", ("prometheus_query", S, "success"))
    sink.hypotheses["carts"] = carts
    assert floor_conclusion(sink) == "carts"
    assert EvidenceSink({"queue-master": unread}).concludable(unread)  # nothing reads health
    too_soon = suspect("queue-master", git, ("prometheus_query", N, "success"))
    assert EvidenceSink({"queue-master": too_soon, "front-end": front}).concludable(too_soon)
    failing = suspect("queue-master", git, ("loki_query", S, "success"))
    assert EvidenceSink({"queue-master": failing, "front-end": front}).concludable(failing)


def test_a_release_its_health_did_not_move_after_is_no_evidence() -> None:
    """payment was released 5 min before the alert. Its p95, read over the 30, 5 and 1
    minutes before the alert, rose over the 30 only, and was healthy and steady over the 5
    and the 1 after the release: an earlier fault's residue, not this release's doing. The
    release is no line (Supported on the p95 alone, not Validated), and the report says
    why. Risen in the last 5 too, the release stands (Validated), as it does released 30 s
    before, which no reading could show yet. Middling after the release (risen over the 30
    minutes only, neither healthy nor risen enough since), the release stands and the p95
    stands, but they are not one fault seen twice: Supported, not Validated. Its cpu or
    restarts rising after it are
    movement (the release stands); a middling p95 after it (risen, not enough to support)
    leaves it standing; healthy after it, a p95 middling over the 30 minutes leaves nothing
    to conclude on, whatever a restart count (no healthy verdict) reads; with no reading
    after it at all, the release alone supports."""
    end, spans = 1_000_000.0, (1800.0, 300.0, 60.0)

    def released(ago: float, *reads: tuple[str, Verdict, tuple[Verdict, ...]]) -> Hypothesis:
        h = hyp()
        h.evidence = [ToolEvidence("git_log", S, "a release", "Git", hypothesis="payment",
                                   changed_at=end - ago)]  # fmt: skip
        h.evidence += [ToolEvidence("prometheus_query", v, "", "Test", check=f"signal={sig}",
                                    hypothesis="payment", window=(end - 1800, end),
                                    resolution_s=60.0,
                                    judged_windows=tuple(zip(spans, judged, strict=True)))
                       for sig, v, judged in reads]  # fmt: skip
        return h

    residue = released(300, ("latency_p95", S, (S, R, R)))
    assert residue.state == HypothesisState.SUPPORTED
    assert residue.confidence == hyp(("prometheus_query", S)).confidence
    (why,) = residue.unmoved()
    assert "no evidence of this incident" in why and "latency_p95" in why, why
    sink = EvidenceSink({"payment": residue})
    assert why in build_report(Alert({"service": "payment"}), sink, "concluded", None).notes
    assert released(300, ("latency_p95", S, (S, S, R))).state == HypothesisState.VALIDATED
    before = released(300, ("latency_p95", S, (S, N, N)))  # rose, then middling after it
    assert before.state == HypothesisState.SUPPORTED and not before.unmoved()
    too_soon = released(30, ("latency_p95", S, (S, R, R)))
    assert too_soon.state == HypothesisState.VALIDATED and not too_soon.unmoved()
    cpu = released(300, ("cpu", S, (S, S, S)), ("error_rate", R, (R, R, R)))
    assert not cpu.unmoved() and cpu.state == HypothesisState.SUPPORTED
    assert released(300, ("latency_p95", N, (N, N, N))).state == HypothesisState.SUPPORTED
    healthy = released(300, ("latency_p95", N, (N, R, R)))
    assert healthy.unmoved() and healthy.state == HypothesisState.CANDIDATE
    assert not EvidenceSink({"payment": healthy}).concludable(healthy)
    no_restart = released(300, ("latency_p95", N, (N, R, R)), ("restarts", N, (N, N, N)))
    assert no_restart.state == HypothesisState.CANDIDATE  # a count has no healthy verdict
    crashed = released(300, ("latency_p95", N, (N, R, R)), ("restarts", S, (S, S, N)))
    assert not crashed.unmoved() and crashed.state == HypothesisState.VALIDATED
    assert released(300).state == HypothesisState.SUPPORTED
