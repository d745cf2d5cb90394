"""Logs as evidence: the file and Loki sources, and the `logs` scorer's two tests."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from sgtest import serve_http

from stackgraph.errors import ConfigError, InputError, SourceUnavailable
from stackgraph.eval.promserver import free_port
from stackgraph.ingest.lanes.telemetry import Span
from stackgraph.rca.facts import EdgeFact, Facts
from stackgraph.rca.model import LogLine
from stackgraph.rca.scorers.logs import (
    OUT_P,
    callers_of,
    dropped,
    logs,
    looks,
    mine,
    share_surprise,
    site,
    surprise,
)
from stackgraph.rca.sources import FileLogs, LokiLogs
from stackgraph.rca.sources.logs import level_of
from stackgraph.rca.windows import Windows

T0 = 1_674_981_700.0
NEZHA_LOG = (
    "Timestamp,TimeUnixNano,Node,PodName,Container,TraceID,SpanID,Log\n"
    "2023-01-29T08:43:17Z,1674981797121704441,n,ts-contacts-service-866bd68c97-xcqfx,server,"
    'tr1,sp1,"{""log"":""16:43:17.120 ERROR  c.s.ContactsServiceImpl#37 No contacts\\n"",'
    '""stream"":""stdout""}"\n'
    "2023-01-29T08:43:18Z,1674981798000000000,n,ts-contacts-service-866bd68c97-xcqfx,server,"
    'tr2,sp2,"{""log"":""16:43:18.000 INFO  c.s.ContactsServiceImpl#29 found 3\\n""}"\n'
)


def test_file_logs_read_nezha_csv_and_logcli_jsonl(tmp_path: Path) -> None:
    (tmp_path / "08_44_log.csv.gz").write_bytes(gzip.compress(NEZHA_LOG.encode()))
    jsonl = {"timestamp": "2026-01-01T00:00:05.123456789Z", "line": "WARNING disk 91%",
             "labels": {"service_name": "db", "trace_id": "t", "span_id": "s"}}  # fmt: skip
    (tmp_path / "more.jsonl").write_text(json.dumps(jsonl) + "\n")
    source = FileLogs(tmp_path)
    lines = source.lines("ts-contacts-service", 0, 2e9)
    assert [(x.level, x.trace_id, x.span_id) for x in lines] == [
        ("ERROR", "tr1", "sp1"), ("INFO", "tr2", "sp2")
    ]  # fmt: skip
    assert lines[0].text.startswith("16:43:17.120 ERROR") and lines[0].t == pytest.approx(
        1674981797.1217
    )
    assert source.lines("ts-contacts-service", 1674981797.5, 2e9) == [lines[1]]
    (db,) = source.lines("db", 0, 2e9)
    assert db.level == "WARN" and db.t == pytest.approx(1767225605.123456)
    assert source.lines("nobody", 0, 2e9) == []
    (tmp_path / "bad.jsonl").write_text('{"line": "no time"}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:1"):
        FileLogs(tmp_path)
    (tmp_path / "bad.jsonl").unlink()
    bad_time = NEZHA_LOG.replace("1674981798000000000", "-6795364578871345152")
    (tmp_path / "08_44_log.csv.gz").write_bytes(gzip.compress(bad_time.encode()))
    with pytest.raises(InputError, match=r"08_44_log\.csv\.gz:3: .*-6795364578871345152"):
        FileLogs(tmp_path)  # the line as the file numbers it (a quoted field spans none here)
    with pytest.raises(InputError, match="does not exist"):
        FileLogs(tmp_path / "missing")


def test_loki_logs_speak_the_query_range_api() -> None:
    asked: list[dict[str, list[str]]] = []

    def answer(path: str) -> tuple[int, object]:
        url = urlparse(path)
        assert url.path == "/loki/api/v1/query_range"
        asked.append(parse_qs(url.query))
        return 200, {"status": "success", "data": {"resultType": "streams", "result": [
            {"stream": {"service_name": "checkout", "trace_id": "t9"},
             "values": [["1767225602000000000", "level=error msg=boom"],
                        ["1767225601000000000", "INFO ok"]]}]}}  # fmt: skip

    with serve_http(answer) as url:
        lines = LokiLogs(url).lines("checkout", 1767225600, 1767225660)
    assert [x.level for x in lines] == ["INFO", "ERROR"]
    assert lines[1].trace_id == "t9" and lines[0].t == 1767225601.0
    assert asked[0]["query"] == ['{service_name="checkout"}']
    assert asked[0]["direction"] == ["forward"]
    with pytest.raises(ConfigError, match="<<service>>"):
        LokiLogs("http://x", selector='{app="x"}')
    with pytest.raises(SourceUnavailable, match=r"Loki at .* is unreachable"):
        LokiLogs(f"http://127.0.0.1:{free_port()}").lines("checkout", 0, 1)


def test_levels() -> None:
    assert level_of("16:43:17.120 ERROR c.s.X") == "ERROR"
    assert level_of("[WARNING] slow") == "WARN"
    assert level_of("all good") == ""
    assert level_of('{"level":"warning","msg":"x"}') == "WARN"
    assert level_of("ts=1 lvl=err msg=boom") == "ERROR"


def _line(t: float, text: str, level: str = "INFO") -> LogLine:
    return LogLine(t, "svc", level, text)


def test_an_error_burst_and_new_templates_vote_a_quiet_service_does_not() -> None:
    base = tuple(_line(T0 - 600 + 2 * i, f"served request {i} in {i % 7} ms") for i in range(300))
    burst = tuple(_line(T0 + i, "db timeout after 30 s", "ERROR") for i in range(12))
    quiet = tuple(_line(T0 + i, f"served request {i} in 3 ms") for i in range(60))
    facts = Facts(anchor="a", windows=Windows((T0, T0 + 120), (T0 - 600, T0)),
                  logs={"bad": (base, burst + quiet), "fine": (base, quiet)})  # fmt: skip
    sig = logs(facts, {})
    assert set(sig.scores) == {"bad"} and sig.scores["bad"] > 10
    assert any("templates the baseline never showed" in e.summary for e in sig.evidence["bad"])
    assert len(mine(base, burst + quiet).new) == 12
    assert logs(Facts(anchor="a", windows=facts.windows), {}).abstained


def test_a_burst_that_began_late_in_the_window_is_judged_on_that_part() -> None:
    """Errors at the baseline's rate for half the window, then a burst up to the alert: over
    the whole window it is within chance, over its second half it is not."""
    windows = Windows((T0, T0 + 300), (T0 - 1200, T0))

    def errors(t0: float, n: int, every: float) -> tuple[LogLine, ...]:
        return tuple(_line(t0 + every * i, f"timeout {i}", "ERROR") for i in range(n))

    base = errors(T0 - 1200, 40, 30.0)
    late = errors(T0 + 150, 20, 7.0)
    sig = logs(Facts(anchor="a", windows=windows, logs={"late": (base, late)}), {})
    assert "late" in sig.scores
    assert any("20 error line(s)" in e.summary and "its last" in e.summary
               for e in sig.evidence["late"])  # fmt: skip
    whole = surprise(20, 40, 300, 1200) - math.log10(len(looks(windows)))
    assert whole < -math.log10(OUT_P)  # the whole window alone would not vote


def test_a_code_path_that_fell_silent_in_the_last_minute_is_judged_on_that_minute() -> None:
    """Two statements alternate; in the window's last minute the second stops (an exception
    between them). Over the window's second half the silence is diluted by the minutes
    before it (within chance); over its last minute it is not."""
    windows = Windows((T0, T0 + 300), (T0 - 1200, T0))

    def pair(t0: float, n: int, every: float) -> list[LogLine]:
        return [_line(t0 + every * i, f"{'begin' if i % 2 else 'end'} at c.s.PriceController"
                      f"#{39 if i % 2 else 46}") for i in range(n)]  # fmt: skip

    base = pair(T0 - 1200, 80, 15.0)
    alert = [*pair(T0, 48, 5.0), *(_line(T0 + 242 + 4 * i, "begin at c.s.PriceController#39")
                                   for i in range(15))]  # fmt: skip
    assert looks(windows) == [T0 + 240, T0 + 180, T0 + 120, T0 + 60, T0]
    sig = logs(Facts(anchor="a", windows=windows, logs={"price": (base, alert)}), {})
    assert "price" in sig.scores
    assert any("0 of 15 line(s)" in e.summary and "its last 1 min" in e.summary
               for e in sig.evidence["price"])  # fmt: skip
    half = [x for x in alert if x.t >= T0 + 150]  # the old look: the window's second half
    s, _ = dropped(mine(base, half, mid=T0 - 600))
    assert s - math.log10(2) < -math.log10(OUT_P)  # within chance there, two looks corrected


def test_new_templates_as_usual_as_in_the_baseline_do_not_vote() -> None:
    """A service that always logs never-seen lines (one-off messages): its baseline's second
    half holds as many new ones as the alert window, so they are no burst."""

    def one_off(i: int) -> str:  # a different length: a template of its own
        return "step " + " ".join(["go"] * (i + 1))

    chatty = tuple(_line(T0 - 600 + 10 * i, one_off(i)) for i in range(60))
    fresh = tuple(_line(T0 + 10 * i, one_off(100 + i)) for i in range(12))
    windows = Windows((T0, T0 + 120), (T0 - 600, T0))
    sig = logs(Facts(anchor="a", windows=windows, logs={"chatty": (chatty, fresh)}), {})
    t = mine(chatty, fresh, mid=T0 - 300)
    assert len(t.new) == 12 and len(t.usual) == 30 and sig.scores == {}


def test_new_templates_are_a_share_of_lines_and_need_a_held_out_half() -> None:
    """A busier window writes more lines of every kind, new ones included: at the baseline's
    share of them it is no burst (it was, counted per second). A baseline whose second half
    the source recorded nothing of holds nothing out, so it says nothing of what is usual."""

    def lines(t0: float, n: int, step: float, first_new: int) -> tuple[LogLine, ...]:
        out = []
        for i in range(n):  # every tenth line one-off: a token count of its own
            text = ("step " + " ".join(["go"] * (first_new + i)) if i % 10 == 9
                    else f"served request {i} in {i % 7} ms")  # fmt: skip
            out.append(_line(t0 + step * i, text))
        return tuple(out)

    windows = Windows((T0, T0 + 120), (T0 - 600, T0))
    base = lines(T0 - 600, 120, 5.0, 1)
    busy = lines(T0, 100, 1.2, 500)
    t = mine(base, busy, mid=T0 - 300)
    assert len(t.new) == 10 and len(t.usual) == 6
    assert surprise(len(t.new), len(t.usual), 120, 300) > 3  # per second it was a burst
    sig = logs(Facts(anchor="a", windows=windows, logs={"busy": (base, busy)}), {})
    assert sig.scores == {}
    early = lines(T0 - 600, 120, 2.0, 1)  # all before the baseline's middle
    sig = logs(Facts(anchor="a", windows=windows, logs={"early": (early, busy)}), {})
    assert sig.scores == {} and "early" in sig.covered
    assert share_surprise(10, 100, 0, 60) > 5 and share_surprise(10, 100, 6, 60) < 1


def test_surprise_is_a_poisson_tail() -> None:
    assert surprise(0, 5, 60, 600) == 0.0
    assert surprise(1, 10, 60, 600) < 1  # one error where one a minute is usual
    assert surprise(10, 0, 60, 600) > 15  # ten where none were in ten minutes
    assert surprise(10, 0, 60, 600) > surprise(10, 5, 60, 600)


def test_a_caller_whose_callee_burst_as_strongly_keeps_only_its_own_part() -> None:
    """The frontier rule: the failures a caller logs are its callee's seen through it."""
    base = tuple(_line(T0 - 600 + i, f"served request {i} in {i % 7} ms") for i in range(300))

    def errors(n: int) -> tuple[LogLine, ...]:
        return tuple(_line(T0 + i, "call failed: 500", "ERROR") for i in range(n))

    windows = Windows((T0, T0 + 120), (T0 - 600, T0))
    edges = (EdgeFact("front", "orders"), EdgeFact("orders", "orders"))
    same = {"front": (base, errors(12)), "orders": (base, errors(12))}
    sig = logs(Facts(anchor="front", windows=windows, edges=edges, logs=same), {})
    assert set(sig.scores) == {"orders"} and "front" in sig.covered
    assert any("orders, which it calls, burst too" in e.summary for e in sig.evidence["front"])
    more = {"front": (base, errors(30)), "orders": (base, errors(12))}
    sig = logs(Facts(anchor="front", windows=windows, edges=edges, logs=more), {})
    alone = logs(Facts(anchor="front", windows=windows, logs=more), {})
    assert sig.scores["orders"] == alone.scores["orders"]
    assert sig.scores["front"] == pytest.approx(alone.scores["front"] - alone.scores["orders"])


def test_a_template_that_fell_silent_votes_a_fall_in_load_does_not() -> None:
    """An exception between two log statements: the first still writes, the second stops.
    Fewer requests lower both alike, and fewer error lines is no fault."""

    def served(t0: float, n: int, step: float, *, saved: bool = True) -> tuple[LogLine, ...]:
        out = []
        for i in range(n):
            out.append(_line(t0 + step * i, f"handling order {i} for user {i % 9}"))
            if saved:
                out.append(_line(t0 + step * i + 0.5, f"saved order {i} in {i % 5} ms"))
        return tuple(out)

    base = served(T0 - 600, 200, 3.0) + tuple(
        _line(T0 - 600 + 7 * i, f"retry {i} failed", "ERROR") for i in range(40)
    )
    windows = Windows((T0, T0 + 120), (T0 - 600, T0))
    facts = Facts(anchor="a", windows=windows, logs={
        "broken": (base, served(T0, 40, 3.0, saved=False)),
        "quieter": (base, served(T0, 10, 12.0)),
    })  # fmt: skip
    sig = logs(facts, {})
    assert set(sig.scores) == {"broken"}
    assert any("a code path that stopped running" in e.summary for e in sig.evidence["broken"])
    t = mine(base, served(T0, 10, 12.0), mid=T0 - 300)
    assert dropped(t)[0] < 1 and sum(t.base.values()) == 400  # the error lines left out


def _served(
    service: str, caller: str, t0: float, n: int, every: float, said: tuple[str, ...]
) -> tuple[list[LogLine], list[Span]]:
    """n requests from `caller`, `every` s apart, each a caller span, the service's span
    under it, and one line per statement `said` (cycled through) written in it."""
    out: tuple[list[LogLine], list[Span]] = ([], [])
    for i in range(n):
        t, trace = t0 + every * i, f"{caller}-{service}-{t0:.0f}-{i}"
        out[1].extend((Span(trace, "c", "", caller, "", 5.0, t),
                       Span(trace, "s", "c", service, "", 3.0, t)))  # fmt: skip
        out[0].append(LogLine(t, service, "INFO", f"12:00:00.000 INFO  {said[i % len(said)]} "
                              f"request {i}", trace, "s"))  # fmt: skip
    return out


def test_a_template_that_fell_with_its_callers_calls_is_their_mix_not_a_silenced_path() -> None:
    """route serves two endpoints: travel calls the first, basic both, turn about. When
    travel stops calling (its own flow broke), the first's share of route's lines falls,
    yet per caller each share is as it was: its callers' mix, not a code path that
    stopped in route, so it does not vote. price, whose second statement fell silent while
    basic still calls it, does, as it would without spans."""
    windows = Windows((T0, T0 + 300), (T0 - 1200, T0))
    q47, q53 = "r.c.RouteController#47", "r.c.RouteController#53"
    p39, p46 = "p.c.PriceController#39", "p.c.PriceController#46"
    parts = [
        _served("route", "travel", T0 - 1200, 150, 8.0, (q47,)),
        _served("route", "basic", T0 - 1200, 100, 12.0, (q47, q53)),
        _served("route", "basic", T0, 40, 7.0, (q47, q53)),
        _served("price", "basic", T0 - 1200, 200, 6.0, (p39, p46)),
        _served("price", "basic", T0, 40, 7.0, (p39,)),
    ]
    lines = [x for ls, _ in parts for x in ls]
    spans = [s for _, ss in parts for s in ss]

    def facts(traces: tuple[list[Span], list[Span]]) -> Facts:
        return Facts(anchor="gateway", windows=windows, traces=traces, logs={
            svc: (tuple(x for x in lines if x.service == svc and x.t < T0),
                  tuple(x for x in lines if x.service == svc and x.t >= T0))
            for svc in ("route", "price")})  # fmt: skip

    alone = logs(facts(([], [])), {})
    assert set(alone.scores) == {"route", "price"}  # a fall in share, whoever called
    traced = logs(
        facts(([s for s in spans if s.end_s < T0], [s for s in spans if s.end_s >= T0])), {}
    )
    assert set(traced.scores) == {"price"}
    assert traced.scores["price"] == alone.scores["price"]  # one caller: the same test
    assert any("its 1 caller(s)' mix taken as it is" in e.summary for e in traced.evidence["price"])
    caller = callers_of(spans)
    assert caller is not None and callers_of([]) is None
    assert {caller(x) for x in lines if x.service == "route"} == {"travel", "basic"}
    assert caller(LogLine(T0, "route", "INFO", "no span")) == ""
    looped = callers_of([Span("t", "a", "b", "route", "", 1.0, T0),
                         Span("t", "b", "a", "route", "", 1.0, T0)])  # fmt: skip
    assert looped is not None and looped(LogLine(T0, "route", "INFO", "x", "t", "a")) == ""


def test_lines_of_an_unknown_caller_keep_the_pooled_share() -> None:
    """Requests still in flight when the window was read have no span yet: their lines'
    caller is unknown. A few untraced lines of a job in the baseline do not stand for them
    (as a stratum of their own they would, and the job's template would have "fallen")."""
    windows = Windows((T0, T0 + 300), (T0 - 1200, T0))
    lines, spans = _served("svc", "web", T0 - 1200, 200, 6.0, ("a.B#10", "a.B#20"))
    lines += [LogLine(T0 - 900 + 60 * i, "svc", "INFO", f"INFO  a.Job#99 run {i}", f"j{i}", "x")
              for i in range(4)]  # fmt: skip
    alert, alert_spans = _served("svc", "web", T0, 60, 5.0, ("a.B#10", "a.B#20"))
    in_flight = {(x.trace_id, "s") for x in alert[30:]}
    alert_spans = [s for s in alert_spans if (s.trace_id, s.span_id) not in in_flight]
    facts = Facts(anchor="web", windows=windows, traces=(spans, alert_spans),
                  logs={"svc": (tuple(lines), tuple(alert))})  # fmt: skip
    assert logs(facts, {}).scores == {}


@pytest.mark.parametrize(
    ("text", "at"),
    [
        ("18:26:03.273 INFO  t.s.TravelServiceImpl#366 TraceID: 90ac [getTickets]",
         "t.s.TravelServiceImpl#366"),
        ("ts=1 level=info caller=server/handler.go:42 msg=served", "handler.go:42"),
        ("2026-01-01 10:00:00,120 views.py:88 ERROR boom", "views.py:88"),
        ("worker#3 picked up Order#1234", None),  # ids, not a dotted class
        ("dial tcp redis.default.svc:6379: connection refused", None),  # a host, not a file
        ("done at 12:46:52, PR #17", None),
    ],
)  # fmt: skip
def test_a_caller_site_is_a_dotted_class_or_a_source_file_and_its_line(
    text: str, at: str | None
) -> None:
    assert site(text) == at


def test_a_statement_is_its_caller_site_when_lines_read_alike() -> None:
    """Two logback statements whose lines differ only in their numbers are one drain3
    template; where the lines name their caller site, the one that fell silent is found
    (Train Ticket's exception faults stop a method between two such statements)."""

    def served(t0: float, n: int, thrown: bool = False, at: str = "#") -> list[LogLine]:
        lines = (366,) if thrown else (366, 372)
        return [_line(t0 + 3 * i + k, f"18:26:03.273 INFO  t.s.TravelServiceImpl{at}{line} "
                      f"TraceID: {i:032x} [getTickets][calculate time: {i % 7} ms]")
                for i in range(n) for k, line in enumerate(lines)]  # fmt: skip

    t = mine(served(T0 - 600, 100), served(T0, 40, thrown=True), mid=T0 - 300)
    assert set(t.base) == {"at t.s.TravelServiceImpl#366", "at t.s.TravelServiceImpl#372"}
    s, k = dropped(t)
    assert k == "at t.s.TravelServiceImpl#372" and s > 10
    t = mine(served(T0 - 600, 100, at=" line "), served(T0, 40, True, " line "), T0 - 300)
    assert len(t.base) == 1 and dropped(t)[0] < -math.log10(OUT_P)  # no site: one template
