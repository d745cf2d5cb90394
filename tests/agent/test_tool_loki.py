"""`loki_query` against a 127.0.0.1 server speaking Loki's `/loki/api/v1/query_range` wire
format (no Loki package exists for this machine: Debian has none, the Go module is AGPL),
and without a Loki URL over the same lines in log files (`logs_path`, `FileLogs`).

The fake evaluates exactly the two metric-query shapes the tool sends over stored lines,
as Loki does (a step's sample counts lines in (t - range, t]; empty steps are left out),
and answers anything else with Loki's 400 parse error."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sgtest import write_calls
from tool_servers import serve_json

from stackgraph.rca.agent import (
    ToolContext,
    ToolStatus,
    Verdict,
    call_tool,
    default_tools,
    floor_args,
)
from stackgraph.rca.model import Candidate, Plan
from stackgraph.rca.sources import FileLogs, FileSpans
from stackgraph.store import GraphStore

AT = 1_767_229_200.0  # the alert
WINDOW = 1800.0
_QUERY = re.compile(
    r'^sum\(count_over_time\(\{service_name="(?P<svc>[^"]+)"\}'
    r"(?: \|~ `\(\?i\)(?P<re>[^`]*)`)? \[(?P<range>\d+)s\]\)\)$"
)


def lines(
    n: int, text: str, start: float, end: float, level: str = "info"
) -> list[tuple[float, str]]:
    """n lines spread evenly over (start, end]."""
    return [(end - (end - start) * i / n, f"level={level} msg={text!r} i={i}") for i in range(n)]


BASE, WIN = (AT - 2 * WINDOW, AT - WINDOW), (AT - WINDOW, AT)
AFTER = (AT, AT + 600)
LOGS: dict[str, list[tuple[float, str]]] = {
    "payment": lines(100, "ok", *BASE) + lines(2, "charge error", *BASE)
    + lines(100, "ok", *WIN) + lines(40, "charge ERROR: upstream timeout", *WIN),
    "checkout": lines(50, "ok", *BASE) + lines(4, "error", *BASE) + lines(50, "ok", *WIN)
    + lines(30, "error", *AFTER),  # errors after the alert do not count
    "ledger": lines(30, "error", *BASE) + lines(30, "error", *WIN),
    "gateway": lines(100, "ok", *BASE) + lines(3, "error", *BASE) + lines(100, "ok", *WIN)
    + lines(30, "upstream error", *WIN),  # 3 -> 30: it calls payment (2 -> 40)
    "edge": lines(100, "ok", *BASE) + lines(3, "error", *BASE) + lines(100, "ok", *WIN)
    + lines(30, "error", *WIN),  # the same, but it calls only checkout (no errors now)
    "billing": lines(100, "ok", *BASE) + lines(300, "ok", *WIN)
    + lines(60, "error", AT - WINDOW, AT - WINDOW / 2, "error"),  # ended before the alert
}  # fmt: skip


def _duration(text: str) -> float:
    return float(text[:-1]) if text.endswith("s") else float(text)


def loki(path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
    if path != "/loki/api/v1/query_range":
        return 404, "404 page not found\n"
    m = _QUERY.match(query["query"][0])
    if m is None:
        return 400, f"parse error : unexpected query {query['query'][0]!r}\n"
    start, end = int(query["start"][0]) / 1e9, int(query["end"][0]) / 1e9
    step, span = _duration(query["step"][0]), float(m["range"])
    needle = re.compile(m["re"], re.IGNORECASE) if m["re"] is not None else None
    values: list[list[Any]] = []
    t = start
    while t <= end + 1e-9:
        n = sum(1 for ts, line in LOGS.get(m["svc"], [])
                if t - span < ts <= t and (needle is None or needle.search(line)))  # fmt: skip
        if n:
            values.append([t, str(n)])
        t += step
    result = [{"metric": {}, "values": values}] if values else []
    return 200, {"status": "success", "data": {"resultType": "matrix", "result": result,
                                               "stats": {"summary": {}}}}  # fmt: skip


def write_logcli(folder: Path, logs: dict[str, list[tuple[float, str]]] = LOGS) -> None:
    """The same lines as the files `logcli --output jsonl` writes (`logs_path`)."""
    with (folder / "export.jsonl").open("w", encoding="utf-8") as fh:
        for service, rows in logs.items():
            for t, text in rows:
                doc = {"labels": {"service_name": service}, "line": text,
                       "timestamp": str(round(t * 1e9))}  # fmt: skip
                fh.write(json.dumps(doc) + "\n")


@pytest.fixture(params=["loki", "files"])
def ctx(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ToolContext]:
    """The tool over Loki, and over log files with no Loki URL: the same lines, so the
    same counts and verdicts."""
    if request.param == "loki":
        with serve_json(loki) as url:
            yield ToolContext(loki_url=url, at=AT, window_s=WINDOW)
    else:
        write_logcli(tmp_path)
        yield ToolContext(logs=FileLogs(tmp_path), at=AT, window_s=WINDOW)


TOOL = default_tools()["loki_query"]


def run(ctx: ToolContext, service: str, /, **extra: Any) -> tuple[Any, Verdict]:
    result = call_tool(TOOL, ctx, {"service": service, **extra})
    return result, TOOL.check(result, service, AT, WINDOW)


def test_error_lines_rising_in_the_window_support(ctx: ToolContext) -> None:
    result, verdict = run(ctx, "payment")
    assert result.status == ToolStatus.SUCCESS, result.summary
    assert (result.data["errors"], result.data["baseline_errors"]) == (40, 2)
    assert (result.data["lines"], result.data["baseline_lines"]) == (140, 102)
    assert verdict == Verdict.SUPPORTS
    assert "40 of 140 log lines of payment contain 'error'" in result.summary
    assert result.summary.endswith("(Loki)" if ctx.loki_url else "(log files)")


def test_a_logging_service_without_errors_in_the_window_is_refuted(ctx: ToolContext) -> None:
    result, verdict = run(ctx, "checkout")
    assert (result.data["errors"], result.data["baseline_errors"]) == (0, 4)
    assert verdict == Verdict.REFUTES


def test_steady_errors_are_inconclusive(ctx: ToolContext) -> None:
    result, verdict = run(ctx, "ledger")
    assert (result.data["errors"], result.data["baseline_errors"]) == (30, 30)
    assert verdict == Verdict.INCONCLUSIVE


def test_error_lines_its_callee_logged_as_strongly_are_the_callees(
    ctx: ToolContext, store: GraphStore
) -> None:
    """gateway's error lines rose 10x, but payment, which it calls, rose 20x: a caller logs
    its callee's failures, so gateway's check is inconclusive and names payment; edge, with
    the same lines but a callee logging no error now, is supported."""
    write_calls(store, [("gateway", "payment"), ("edge", "checkout")])
    graph = dataclasses.replace(ctx, store=store)
    result, verdict = run(graph, "gateway")
    assert (result.data["errors"], result.data["baseline_errors"]) == (30, 3)
    assert [c["server"] for c in result.data["callees"]] == ["payment"]
    assert "payment, which it calls, logged as many more (2 → 40)" in result.summary
    assert "the errors come from payment" in result.summary
    assert verdict == Verdict.INCONCLUSIVE
    assert run(ctx, "gateway")[1] == Verdict.SUPPORTS  # without the graph: no callee known
    result, verdict = run(graph, "edge")
    assert [c["server"] for c in result.data["callees"]] == ["checkout"]
    assert verdict == Verdict.SUPPORTS and "come from" not in result.summary


def test_a_gateway_reads_the_callees_the_plan_suspects_first(
    ctx: ToolContext, store: GraphStore
) -> None:
    """gateway calls 25 services, payment the last by name: a check reads at most
    MAX_CALLEES of them, so it reads those the plan ranks first. Without a plan the first
    20 by name are read, payment is not, and gateway's error lines stand as its own."""
    write_calls(store, [("gateway", n) for n in (*(f"api-{i:02d}" for i in range(24)), "payment")])
    plan = Plan("gateway", [Candidate(n, 0.5, {}) for n in ("gateway", "payment", "api-03")])
    result, verdict = run(dataclasses.replace(ctx, store=store, plan=plan), "gateway")
    assert "the errors come from payment" in result.summary
    assert verdict == Verdict.INCONCLUSIVE
    assert run(dataclasses.replace(ctx, store=store), "gateway")[1] == Verdict.SUPPORTS


def test_error_lines_that_ended_before_the_alert_judge_nothing(ctx: ToolContext) -> None:
    """billing logged 60 errors in the window's first half and none in its last 5 minutes,
    while it kept logging: an earlier incident's, so inconclusive; payment's errors, spread
    to the alert, still support."""
    result, verdict = run(ctx, "billing")
    assert (result.data["errors"], result.data["baseline_errors"]) == (60, 0)
    assert (result.data["recent_errors"], result.data["recent_lines"]) == (0, 50)
    assert "; 0 of 50 in the last 5 min: its errors ended before the alert (" in result.summary
    assert verdict == Verdict.INCONCLUSIVE
    result, verdict = run(ctx, "payment")
    assert result.data["recent_errors"] > 0 and "ended" not in result.summary
    assert verdict == Verdict.SUPPORTS


def _silenced(tmp_path: Path) -> ToolContext:
    """route and travel log two statements each, turn about, for 25 minutes; in the last
    five, the second falls silent (an exception thrown between them). No error anywhere.
    travel calls route."""

    def said(at: str, n: int, start: float, end: float) -> list[tuple[float, str]]:
        return [(t, f"INFO {at} route {i}") for i, (t, _) in enumerate(lines(n, "", start, end))]

    rows = {
        svc: sorted(said(f"{cls}#47 query", 100, AT - 1500, AT - 300)
                    + said(f"{cls}#47 query", 20, AT - 300, AT)
                    + said(f"{cls}#53 found", 100, AT - 1500, AT - 300))
        for svc, cls in (("route", "r.c.RouteController"), ("travel", "t.s.TravelServiceImpl"))
    }  # fmt: skip
    write_logcli(tmp_path, rows)
    return ToolContext(logs=FileLogs(tmp_path), at=AT, window_s=WINDOW)


def test_a_code_path_that_fell_silent_supports_without_an_error_line(
    tmp_path: Path, store: GraphStore
) -> None:
    """Lines without the word no longer refute a suspect whose lines moved otherwise: the
    read path's template tests, on its windows (the 5 minutes before the alert against the
    20 before), find route's second statement silent. travel's fell silent as strongly,
    and it calls route: route's, seen through travel, so travel's check is inconclusive."""
    ctx = _silenced(tmp_path)
    result, verdict = run(ctx, "route")
    assert result.data["errors"] == 0 and result.data["lines"] > 0
    assert verdict == Verdict.SUPPORTS, result.summary
    assert "0 of 20 line(s) of the template 'r.c.RouteController#53'" in result.summary
    assert "a code path that stopped running" in result.summary
    [(strength, _)] = result.data["patterns"]
    assert strength > 3.0
    write_calls(store, [("travel", "route")])
    result, verdict = run(dataclasses.replace(ctx, store=store), "travel")
    assert result.data["patterns_from"] == "route" and verdict == Verdict.INCONCLUSIVE
    assert "route, which it calls, moved as strongly" in result.summary
    assert run(ctx, "travel")[1] == Verdict.SUPPORTS  # without the graph: no callee known


def test_a_template_that_fell_with_its_callers_calls_moves_nothing(tmp_path: Path) -> None:
    """As the plan's template tests: route's first endpoint, which travel and basic call,
    loses its share of route's lines when travel stops calling. With the read path's spans
    the check sees whose requests the lines were written in: per caller nothing moved, and
    lines without the word refute route again; without them the fall still supports it."""
    docs, rows = [], ["trace_id,span_id,parent_span_id,service,duration_ms,start_unix_s"]
    calls = [("travel", AT - 1500, 150, 8.0, ("#47",)), ("basic", AT - 1500, 100, 12.0,
             ("#47", "#53")), ("basic", AT - 300, 40, 7.0, ("#47", "#53"))]  # fmt: skip
    for caller, t0, n, every, said in calls:
        for i in range(n):
            t, trace = t0 + every * i, f"{caller}{t0:.0f}x{i}"
            rows += [f"{trace},c,,{caller},5,{t}", f"{trace},s,c,route,3,{t}"]
            docs.append(
                {
                    "labels": {"service_name": "route", "trace_id": trace, "span_id": "s"},
                    "timestamp": str(round(t * 1e9)),
                    "line": f"INFO r.c.RouteController{said[i % len(said)]} {i}",
                }
            )
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "export.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tmp_path / "spans.csv").write_text("\n".join(rows) + "\n")
    ctx = ToolContext(logs=FileLogs(tmp_path / "logs"), at=AT, window_s=WINDOW)
    result, verdict = run(ctx, "route")
    assert verdict == Verdict.SUPPORTS and "r.c.RouteController#47" in result.summary
    result, verdict = run(dataclasses.replace(ctx, spans=FileSpans(tmp_path / "spans.csv")),
                          "route")  # fmt: skip
    assert result.data["patterns"] == [] and verdict == Verdict.REFUTES, result.summary


def test_a_service_that_does_not_log_is_no_data(ctx: ToolContext) -> None:
    result, verdict = run(ctx, "cart")
    assert result.status == ToolStatus.NO_DATA and verdict == Verdict.INCONCLUSIVE


def test_the_floor_word_is_looked_for(ctx: ToolContext) -> None:
    [args] = floor_args("loki_query", "timeout", "payment")
    assert args == {"service": "payment", "contains": "timeout"}
    result, verdict = run(ctx, args.pop("service"), **args)
    assert result.data["errors"] == 40 and result.data["baseline_errors"] == 0
    assert verdict == Verdict.SUPPORTS


def test_model_text_never_becomes_logql(ctx: ToolContext) -> None:
    for extra in ({"url": "http://evil"}, {"host": "evil"}, {"query": "{job=~\".+\"}"},
                  {"contains": "x` | line_format `{{.password}}"}, {"contains": 'a"b'},
                  {"contains": "e" * 65}):  # fmt: skip
        result, verdict = run(ctx, "payment", **extra)
        assert result.status == ToolStatus.INVALID_ARGUMENTS, extra
        assert verdict == Verdict.INCONCLUSIVE
    dotted, _ = run(ctx, "payment", contains="upstream timeout")
    assert dotted.status == ToolStatus.SUCCESS and dotted.data["errors"] == 40


def test_loki_is_asked_when_both_are_configured(tmp_path: Path) -> None:
    """A Loki URL wins over the files: the files here hold nothing of payment."""
    (tmp_path / "other.jsonl").write_text(json.dumps(
        {"labels": {"service_name": "cart"}, "line": "ok", "timestamp": str(int(AT * 1e9))}
    ) + "\n")  # fmt: skip
    with serve_json(loki) as url:
        both = ToolContext(loki_url=url, logs=FileLogs(tmp_path), at=AT, window_s=WINDOW)
        result, verdict = run(both, "payment")
    assert result.summary.endswith("(Loki)") and verdict == Verdict.SUPPORTS
    files_only = ToolContext(logs=FileLogs(tmp_path), at=AT, window_s=WINDOW)
    assert TOOL.status(files_only).enabled
    assert run(files_only, "payment")[0].status == ToolStatus.NO_DATA


def test_loki_errors_and_outages_are_results() -> None:
    def broken(path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        return 500, "rpc error: code = Unavailable desc = no healthy ingesters\n"

    with serve_json(broken) as url:
        result, verdict = run(ToolContext(loki_url=url, at=AT, window_s=WINDOW), "payment")
    assert result.status == ToolStatus.ERROR
    assert "HTTP 500: rpc error" in result.summary and verdict == Verdict.INCONCLUSIVE
    down, verdict = run(ToolContext(loki_url=url, at=AT), "payment")  # the server is gone
    assert down.status == ToolStatus.UNAVAILABLE and verdict == Verdict.INCONCLUSIVE
    unavailable = call_tool(TOOL, ToolContext(), {"service": "payment"})
    assert unavailable.status == ToolStatus.UNAVAILABLE and "Loki URL" in unavailable.summary
    assert "log files (logs_path)" in unavailable.summary
