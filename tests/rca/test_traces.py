"""Traces as evidence: the span file source, calls failed by their logs, trace structure."""

from __future__ import annotations

from pathlib import Path

from stackgraph.eval.lane_files import write_spans
from stackgraph.ingest.lanes.telemetry import Span
from stackgraph.rca.facts import Facts, NodeFact
from stackgraph.rca.model import LogLine
from stackgraph.rca.scorers.traces import centrality, failed_calls, instability, self_time
from stackgraph.rca.sources import FileSpans
from stackgraph.rca.windows import Windows

T0 = 1_700_000_000.0
WIN = Windows((T0, T0 + 120), (T0 - 600, T0))
NODES = {n: NodeFact(n) for n in ("web", "api", "db")}


def _trace(n: int, t: float, db_ms: float = 10.0) -> list[Span]:
    """web → api → db, kind-less, as the Nezha tracers record them."""
    tid = f"t{n}"
    return [
        Span(tid, "w", "", "web", "", 40.0 + db_ms, t),
        Span(tid, "a", "w", "api", "", 30.0 + db_ms, t),
        Span(tid, "d", "a", "db", "", db_ms, t),
    ]


def _spans(start: float, n: int, db_ms: float = 10.0) -> tuple[Span, ...]:
    return tuple(s for i in range(n) for s in _trace(int(start) + i, start + i, db_ms))


def test_file_spans_serve_a_window(tmp_path: Path) -> None:
    assert write_spans(tmp_path / "s.csv", _spans(T0, 30)) == 90
    source = FileSpans(tmp_path)
    got = source.spans(T0 + 10, T0 + 19)
    assert len(got) == 30 and {s.service for s in got} == {"web", "api", "db"}
    assert got[0].parent_id in ("", "w", "a")


def test_calls_fail_by_the_error_lines_their_spans_logged() -> None:
    alert = _spans(T0, 30)
    errors = tuple(LogLine(T0 + i, "db", "ERROR", "boom", f"t{int(T0) + i}", "d")
                   for i in range(0, 30, 2))  # fmt: skip
    facts = Facts(anchor="web", nodes=NODES, windows=WIN, traces=(_spans(T0 - 300, 30), alert),
                  logs={"db": ((), errors)})  # fmt: skip
    sig = failed_calls(facts, {})
    assert set(sig.scores) == {"db"}  # api's calls into db fail; nothing db calls does
    assert "50% of 30 calls logged an error" in sig.evidence["db"][0].summary
    quiet = Facts(anchor="web", nodes=NODES, windows=WIN, traces=((), alert))
    assert failed_calls(quiet, {}).abstained == "no error line names the span it was in"


def test_a_line_logged_below_the_span_that_received_the_call_fails_that_call() -> None:
    """api handles the call in a span of its own below the one web's call reached (a
    controller, then its implementation); the error line names the inner span."""

    def traced(start: float) -> tuple[Span, ...]:
        return tuple(s for i in range(30) for s in (
            *_trace(int(start) + i, start + i),
            Span(f"t{int(start) + i}", "impl", "a", "api", "", 20.0, start + i),
        ))  # fmt: skip

    errors = tuple(LogLine(T0 + i, "api", "ERROR", "boom", f"t{int(T0) + i}", "impl")
                   for i in range(0, 30, 2))  # fmt: skip
    facts = Facts(anchor="web", nodes=NODES, windows=WIN, traces=(traced(T0 - 300), traced(T0)),
                  logs={"api": ((), errors)})  # fmt: skip
    sig = failed_calls(facts, {})
    assert set(sig.scores) == {"api"}
    assert "web→api: 50% of 30 calls logged an error" in sig.evidence["api"][0].summary


def test_trace_structure_votes_by_its_rise_from_the_baseline() -> None:
    """db is sometimes slow in the alert window: its tail rises most, and only its own time
    rises (web and api wait on it). A level with nothing to compare abstains."""
    slow = tuple(s for i in range(40) for s in _trace(i, T0 + i, 1000.0 if i % 10 == 0 else 10))
    facts = Facts(anchor="web", nodes=NODES, windows=WIN, traces=(_spans(T0 - 300, 40), slow))
    unstable = instability(facts, {}).scores  # web and api wait on db's tail
    assert max(unstable, key=lambda k: unstable[k]) == "db"
    own = self_time(facts, {})
    assert set(own.scores) == {"db"} and "baseline" in own.evidence["db"][0].summary
    central = centrality(facts, {}).scores
    assert central["db"] > central["web"]  # depended on, depending on nothing
    unseen = Facts(anchor="web", nodes=NODES, windows=WIN, traces=((), slow))
    assert instability(unseen, {}).abstained and self_time(unseen, {}).abstained
    assert instability(Facts(anchor="web", windows=WIN), {}).abstained


def test_a_self_time_clipped_to_zero_in_the_baseline_gives_no_verdict() -> None:
    """api calls db asynchronously in the baseline (returns before db does): its self time
    clips to 0, which was not measured, so its alert-window self time has nothing to rise
    from."""

    def spans(n0: int, t: float, api_ms: float) -> tuple[Span, ...]:
        return tuple(s for i in range(30) for s in (
            Span(f"t{n0 + i}", "a", "", "api", "", api_ms, t + i),
            Span(f"t{n0 + i}", "d", "a", "db", "", 50.0, t + i),
        ))  # fmt: skip

    traces = (spans(0, T0 - 300, 5.0), spans(99, T0, 80.0))
    facts = Facts(anchor="api", nodes=NODES, windows=WIN, traces=traces)
    sig = self_time(facts, {})
    assert "api" not in sig.scores and (sig.covered is None or "api" not in sig.covered)


def test_a_service_is_timed_by_the_calls_it_received_not_the_spans_below_them() -> None:
    """In the alert window api also writes three 1 ms spans below each call it receives
    (its implementation, traced): the calls take as long as before, so api is no less
    stable (counted as its calls, the short spans would make its p50 1 ms)."""

    def spans(n0: int, t: float, inner: bool) -> tuple[Span, ...]:
        return tuple(s for i in range(40) for s in (
            *_trace(n0 + i, t + i, 1000.0 if i % 10 == 0 else 10.0),
            *(Span(f"t{n0 + i}", f"impl{k}", "a", "api", "", 1.0, t + i)
              for k in range(3 if inner else 0)),
        ))  # fmt: skip

    facts = Facts(anchor="web", nodes=NODES, windows=WIN,
                  traces=(spans(0, T0 - 300, False), spans(99, T0, True)))  # fmt: skip
    assert instability(facts, {}).scores.get("api", 0.0) == 0.0


def test_a_plan_reads_the_spans_one_call_around_its_candidates() -> None:
    """web → api → db; a plan about api keeps api's spans and the calls into and out of it
    (web's and db's spans of those calls), and nothing of a far service."""
    from stackgraph.rca.read_time import around

    far = Span("t9", "x", "", "batch", "", 5.0, T0)
    got = around([*_trace(1, T0), far], {"api"})
    assert {s.service for s in got} == {"web", "api", "db"}
    assert around([*_trace(1, T0), far], {"db"}) == tuple(_trace(1, T0)[1:])
