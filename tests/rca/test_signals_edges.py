"""The frontier rule on edge series and release timing, on hand-built facts (pure scorers)."""

from __future__ import annotations

from stackgraph.rca.facts import ChangeFact, EdgeFact, Facts, NodeFact, ProbeSeries
from stackgraph.rca.scorers import anomaly, change, onset, telemetry, traversal
from stackgraph.rca.series import assess
from stackgraph.rca.windows import Windows

WIN = Windows(alert=(1000.0, 1600.0), baseline=(400.0, 1000.0))
FLAT = (3.0, 3.1, 2.9, 3.0, 3.05, 2.95, 3.0, 3.1, 2.9, 3.0)


def _edge(caller: str, alert: tuple[float, ...]) -> ProbeSeries:
    return ProbeSeries("latency", f"from:{caller}", FLAT, alert)


def _facts(
    probes: dict[str, tuple[ProbeSeries, ...]], changes: tuple[ChangeFact, ...] = ()
) -> Facts:
    nodes = {n: NodeFact(n) for n in ("front", "mid", "leaf", "other")}
    nodes["front"] = NodeFact("front", position="anchor")
    edges = (EdgeFact("front", "mid"), EdgeFact("mid", "leaf"), EdgeFact("front", "other"))
    return Facts(anchor="front", nodes=nodes, edges=edges, probes=probes, windows=WIN,
                 changes=changes)  # fmt: skip


SLOW = (300.0, 310.0, 290.0, 300.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0)


def test_blame_goes_to_the_deepest_service_whose_calls_in_moved() -> None:
    facts = _facts({"mid": (_edge("front", SLOW),), "leaf": (_edge("mid", SLOW),),
                    "other": (_edge("front", FLAT),)})  # fmt: skip
    sig = telemetry(facts, {})
    assert sig.scores.get("leaf", 0.0) > 0.5
    assert sig.scores.get("mid", 0.0) == 0.0  # its own call out explains the calls into it
    assert sig.scores.get("other", 0.0) == 0.0


def test_a_caller_stalled_for_seconds_is_not_explained_by_a_callee_slower_by_ms() -> None:
    """Both moved, the callee more in relative terms (3 → 30 ms: 0.82) than the caller
    (300 → 1500 ms: 0.67), so by relative moves alone the caller's own part was nothing.
    In seconds, what the callee added is 2% of what the caller's callers wait longer: the
    caller keeps 98% of its move, in the telemetry and the traversal alike."""
    caller_base = tuple(300.0 + d for d in (0, 10, -10, 5, -5, 0, 10, -10, 5, -5))
    stalled = ProbeSeries("latency", "from:front", caller_base, (1500.0,) * 10)
    facts = _facts({"mid": (stalled,), "leaf": (_edge("mid", (30.0,) * 10),),
                    "other": (_edge("front", FLAT),)})  # fmt: skip
    for scorer in (telemetry, traversal):
        sig = scorer(facts, {})
        assert 0.6 < sig.scores["mid"] < sig.scores["leaf"]
    # a callee whose added time is the caller's: the caller's own part is the rest
    explained = _facts({"mid": (stalled,), "leaf": (_edge("mid", (1190.0,) * 10),)})
    assert telemetry(explained, {}).scores["mid"] < 0.05


def test_without_call_series_a_callees_cpu_does_not_explain_its_callers() -> None:
    """No series per call: the walk follows the services that moved. mid's CPU rose most and
    leaf's too (it shares the node): CPU is spent by a service, not passed up by its calls,
    so mid keeps its move. A callee's latency is passed up, and explains its caller's."""

    def own(kind: str, level: float) -> ProbeSeries:
        return ProbeSeries(kind, kind, FLAT, (level,) * 10)

    busy = _facts({"mid": (own("cpu", 50.0),), "leaf": (own("cpu", 12.0),)})
    sig = traversal(busy, {"anomaly": anomaly(busy, {})})
    assert sig.scores["mid"] > sig.scores["leaf"] > 0
    slow = _facts({"mid": (own("latency", 60.0),), "leaf": (own("latency", 60.0),)})
    sig = traversal(slow, {"anomaly": anomaly(slow, {})})
    assert "mid" not in sig.scores and sig.scores["leaf"] > 0


def test_small_latency_wander_is_not_an_edge_anomaly() -> None:
    wander = tuple(v * 1.5 for v in FLAT)  # robust z is large, but latency did not double
    facts = _facts({"leaf": (_edge("mid", wander),)})
    assert telemetry(facts, {}).scores.get("leaf", 0.0) == 0.0


def test_without_a_metrics_source_only_recorded_failures_judge() -> None:
    """Levels stand in for series only where failures were recorded: an error rate the
    graph does not hold (spans without a status) is not a healthy 0%."""
    unrecorded = _facts({})
    assert telemetry(unrecorded, {}).abstained
    recorded = Facts(anchor="front", nodes=unrecorded.nodes, windows=WIN, probes={},
                     edges=(EdgeFact("front", "mid", error_rate=0.3), EdgeFact("mid", "leaf"),
                            EdgeFact("front", "other", error_rate=0.0)))  # fmt: skip
    sig = telemetry(recorded, {})
    assert sig.covered == {"mid", "other"} and sig.scores["mid"] > 0.5
    assert "leaf" not in sig.evidence and "none recorded" not in str(sig.evidence["mid"])


def test_release_just_before_its_services_onset_beats_one_with_no_effect() -> None:
    errs = ProbeSeries(
        "errors", "from:mid", (0.0,) * 10, (0.0, 0.0, 0.3, 0.3, 0.3, 0.3) + (0.3,) * 4
    )
    changes = (
        ChangeFact("leaf", "Deploy", 1030.0, "v2"),
        ChangeFact("other", "Deploy", 1030.0, "v2"),
    )
    sig = change(_facts({"leaf": (errs,)}, changes), {})
    assert sig.scores.get("leaf", 0.0) > 0.5
    assert "other" not in sig.scores  # its service did not move: evidence, not a vote
    assert "did not move (no vote)" in sig.evidence["other"][0].summary


def test_a_release_too_recent_for_its_series_to_show_is_not_judged_by_them() -> None:
    """Series that are a minute fine need three minutes after a release to show it. A
    release 40 s before the window's end was read, wholly, as the version before: its onset
    is known only to lie after the end, and it counts at the delay model's expectation past
    that point, half its weight there: below one whose service visibly moved 150 s after its
    release. A release 5 min before the end whose service stayed healthy does not vote."""
    times = tuple(1000.0 + 60.0 * i for i in range(10))
    healthy = ProbeSeries("latency", "latency", FLAT, FLAT, times, span_s=60.0)
    moved = ProbeSeries("errors", "errors", (0.0,) * 10, (0.0,) * 3 + (0.3,) * 7, times, 60.0)
    changes = (
        ChangeFact("mid", "Deploy", 1560.0, "v2"),  # 40 s before the window's end
        ChangeFact("other", "Deploy", 1300.0, "v2"),  # 5 min before it
        ChangeFact("leaf", "Deploy", 1030.0, "v2"),  # its errors rose 150 s later
    )
    facts = _facts({"mid": (healthy,), "other": (healthy,), "leaf": (moved,)}, changes)
    sig = change(facts, {})
    assert sig.scores["leaf"] > sig.scores["mid"] > 0.4  # 0.61 > 0.44; at the end: 0.88
    assert "too soon to show" in sig.evidence["mid"][0].summary
    assert "other" not in sig.scores
    assert "did not move (no vote)" in sig.evidence["other"][0].summary
    # raw samples every 15 s see a release 60 s before the end: four readings of it
    fine = ProbeSeries("latency", "latency", FLAT, FLAT, tuple(1465.0 + 15 * i for i in range(10)))
    seen = (ChangeFact("mid", "Deploy", 1540.0, "v2"),)
    assert "mid" not in change(_facts({"mid": (fine,)}, seen), {}).scores


def test_one_span_gone_by_the_windows_end_is_no_move() -> None:
    """Readings every 15 s of a rate over a minute: one slow minute (a fresh pod's first
    requests) reaches the readings within two spans of it. Gone by the alert, it is no move
    of what the alert reports; at the window's end, or longer than two spans, it is."""
    times = tuple(1000.0 + 15.0 * i for i in range(40))
    base = FLAT * 4
    minute = base[:20] + (30.0,) * 6 + base[26:]
    gone = ProbeSeries("latency", "latency", FLAT, minute, times, span_s=60.0)
    assert not assess(gone, WIN.alert).out
    assert "one span out of band" in assess(gone, WIN.alert).phrase
    assert "mid" not in anomaly(_facts({"mid": (gone,)}), {}).scores
    last = ProbeSeries("latency", "latency", FLAT, base[:34] + (30.0,) * 6, times, span_s=60.0)
    longer = ProbeSeries("latency", "latency", FLAT, base[:20] + (30.0,) * 9 + base[29:], times,
                         span_s=60.0)  # fmt: skip
    assert assess(last, WIN.alert).out and assess(longer, WIN.alert).out
    unknown = ProbeSeries("latency", "latency", FLAT, minute, times)  # span unknown: as before
    assert assess(unknown, WIN.alert).out


def test_a_spike_before_the_fault_is_not_its_onset() -> None:
    """mid's series spiked once at the window's start and left its band for good at 70%;
    leaf's left it at 30% and stayed out. The fault's part of a window starts where most
    readings after it are out of band: leaf's onset comes first, not mid's stray spike. A
    burst that ended is no onset of what the alert reports."""
    times = tuple(1000.0 + 60.0 * i for i in range(10))
    spiky = ProbeSeries("latency", "latency", FLAT, (30.0,) + FLAT[1:7] + (30.0,) * 3, times)
    early = ProbeSeries("latency", "latency", FLAT, FLAT[:3] + (30.0,) * 7, times)
    sig = onset(_facts({"mid": (spiky,), "leaf": (early,)}), {})
    assert sig.scores["leaf"] > sig.scores["mid"]
    assert "left its band at 1970-01-01T00:23:40Z" in sig.evidence["mid"][0].summary
    ended = ProbeSeries("latency", "latency", FLAT, FLAT[:2] + (30.0,) * 3 + FLAT[5:], times)
    assert onset(_facts({"mid": (ended,)}), {}).abstained
