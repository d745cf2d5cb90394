"""`loki_query`: error lines of a suspect in the alert window vs the baseline, from Loki or
from the configured log files.

With a Loki URL: two metric queries through `/loki/api/v1/query_range` with `step` equal
to the window: all of the service's lines (does it log at all?) and the lines matching a
word (default `error`, case-insensitive). The word is restricted to a plain charset by the
parameter schema and placed in a raw (backtick) LogQL string with `.` escaped, so model
text never becomes LogQL syntax.

Without one, the read path's log source (`ToolContext.logs`: the files under `logs_path`)
is read and counted the same way, lines per window and lines holding the word in any case,
and judged by the same rule (`line_verdict`): a deployment that keeps its logs in files
gets the check a Loki user gets. A window counts at most `rca.sources.logs.MAX_LINES` lines.

Error lines that would support a suspect are also counted in the last minutes before the
alert (`rca.windows.ALERT_LEAD_S`): errors those minutes no longer hold ended before the
alert and judge nothing (`log_lines.errors_ended`). Those that still support are checked
against the services it calls (`downstream`): a callee's error lines that rose as strongly
explain them (a caller logs its callee's failures), and the check is inconclusive for the
suspect.

A fault need not write the word: an exception thrown between two log statements silences
the second, and a new code path writes lines no baseline held. Where the read path's log
source is set (`ToolContext.logs`, Loki or files), the suspect's lines also get the plan's
template tests (`rca.scorers.logs.bursts`: templates new to the baseline, templates that
fell silent, at the same three-sigma level, per caller where the read path's spans say
whose request a line was written in: `ToolContext.spans`), with the same frontier rule: a
callee whose lines moved as strongly explains them. Lines that moved so support the suspect; lines
without an error but not as usual no longer refute it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache, partial
from typing import Any

from stackgraph.rca.model import LogSource

from ..scorers.logs import Caller, bursts, callers_of
from ..windows import ALERT_LEAD_S, BASELINE_SPAN_S, Windows
from .downstream import callees_to_read, explained_by
from .evidence import Verdict
from .http_get import get_json
from .log_lines import line_verdict, recent_phrase
from .toolbox import Prerequisite, Tool, ToolContext, ToolResult, ToolStatus, service_param

LOGQL_LINES = 'sum(count_over_time({service_name="<<s>>"} [<<w>>s]))'
LOGQL_MATCHING = 'sum(count_over_time({service_name="<<s>>"} |~ `(?i)<<re>>` [<<w>>s]))'
"""`<<s>>` the service name, `<<re>>` the word as an RE2 literal, `<<w>>` whole seconds."""
WORD = r"^[A-Za-z0-9][A-Za-z0-9 _.:/=-]{0,63}$"
"""What `contains` may be: letters, digits and a few literal punctuation marks."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$")
_WORD = re.compile(WORD)


def logql(template: str, service: str, word: str, window_s: float) -> str:
    if not _NAME.match(service):
        raise ValueError(f"{service!r} is not a service name")
    if not _WORD.match(word):
        raise ValueError(f"{word!r} is not a plain word")
    return (
        template.replace("<<s>>", service)
        .replace("<<re>>", word.replace(".", "\\."))
        .replace("<<w>>", str(max(60, int(window_s))))
    )


def _counts(ctx: ToolContext, query: str, win: Windows) -> dict[str, float] | ToolResult:
    data = get_json(
        str(ctx.loki_url),
        "/loki/api/v1/query_range",
        {"query": query, "start": str(int(win.start * 1e9)), "end": str(int(win.end * 1e9)),
         "step": f"{int(win.span_s)}s"},
        "Loki",
    )  # fmt: skip
    if isinstance(data, ToolResult):
        return data
    if data.get("resultType") != "matrix":
        return ToolResult(ToolStatus.ERROR, f"Loki answered a {data.get('resultType')!r} result")
    out = {"window": 0.0, "baseline": 0.0}
    for series in data.get("result", []):
        for t, value in series.get("values", []):
            at = "window" if abs(float(t) - win.end) < 1e-3 else "baseline"
            out[at] += float(value)
    return out


Counts = dict[str, int]
"""lines, baseline_lines, errors, baseline_errors."""


def _from_loki(ctx: ToolContext, service: str, word: str, win: Windows) -> Counts | ToolResult:
    lines = _counts(ctx, logql(LOGQL_LINES, service, word, win.span_s), win)
    if isinstance(lines, ToolResult):
        return lines
    if lines["window"] == 0:
        return {"lines": 0, "baseline_lines": int(lines["baseline"]), "errors": 0,
                "baseline_errors": 0}  # fmt: skip
    matching = _counts(ctx, logql(LOGQL_MATCHING, service, word, win.span_s), win)
    if isinstance(matching, ToolResult):
        return matching
    return {"errors": int(matching["window"]), "baseline_errors": int(matching["baseline"]),
            "lines": int(lines["window"]), "baseline_lines": int(lines["baseline"])}  # fmt: skip


def _from_source(source: LogSource, service: str, word: str, win: Windows) -> Counts:
    """Loki's two counts over a source's lines: (start, at] is the window and
    (baseline_start, start] the baseline, as a metric query's steps count them."""
    needle = word.lower()
    out = {"lines": 0, "baseline_lines": 0, "errors": 0, "baseline_errors": 0}
    spans = ((win.start, win.end, "window", ""),
             (win.baseline[0], win.start, "baseline", "baseline_"))  # fmt: skip
    for start, end, which, key in spans:
        for line in source.lines(service, start, end):
            if win.which(line.t) == which:
                out[f"{key}lines"] += 1
                out[f"{key}errors"] += int(needle in line.text.lower())
    return out


def _patterns(
    source: LogSource, service: str, end: float, caller: Caller | None = None
) -> list[tuple[float, str]]:
    """The plan's template tests on a service's lines (module docstring), strongest first,
    on the read path's windows ending at `end` (the ALERT_LEAD_S before it, against the
    BASELINE_SPAN_S before them: a code path silenced minutes ago is lost in a long window,
    and one silenced long ago has ended); none without a baseline line to learn from."""
    start = end - ALERT_LEAD_S
    win = Windows((start, end), (start - BASELINE_SPAN_S, start))
    base = [x for x in source.lines(service, *win.baseline) if win.which(x.t) == "baseline"]
    if not base:
        return []
    alert = [x for x in source.lines(service, win.start, win.end) if win.which(x.t) == "window"]
    found = [(round(v, 1), why) for test, v, why in bursts(base, alert, win, caller)
             if test != "errors"]  # fmt: skip
    return sorted(found, reverse=True)


def _strength(source: LogSource, service: str, end: float, caller: Caller | None) -> float:
    """The strongest of a service's template tests (0 when none is out)."""
    found = _patterns(source, service, end, caller)
    return found[0][0] if found else 0.0


def _count(
    ctx: ToolContext, service: str, word: str, win: Windows
) -> tuple[str, Counts] | ToolResult:
    """Where the lines were counted, and the counts."""
    if ctx.loki_url:
        counted = _from_loki(ctx, service, word, win)
        return counted if isinstance(counted, ToolResult) else ("Loki", counted)
    if ctx.logs is not None:
        return ctx.logs.where, _from_source(ctx.logs, service, word, win)
    return ToolResult(ToolStatus.UNAVAILABLE, "no Loki URL and no log source")


def _run(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    service, word = str(args["service"]), str(args.get("contains") or "error")
    win = Windows.ending_at(ctx.now(), ctx.window_s)
    found = _count(ctx, service, word, win)
    if isinstance(found, ToolResult):
        return found
    where, counted = found
    if counted["lines"] == 0:
        return ToolResult(ToolStatus.NO_DATA, f"no log lines of {service} in {where} in the "
                          "alert window", {"lines": 0})  # fmt: skip
    facts: dict[str, Any] = {**counted, "contains": word}
    if line_verdict(facts) == Verdict.SUPPORTS and win.span_s > ALERT_LEAD_S:
        # read apart, not split off the window: a window is cut at its first MAX_LINES
        last = _count(ctx, service, word, Windows.ending_at(win.end, ALERT_LEAD_S))
        if isinstance(last, ToolResult):
            return last
        facts.update(recent_errors=last[1]["errors"], recent_lines=last[1]["lines"])
    called = cache(partial(callees_to_read, ctx, service))  # read once, if at all
    text = (f"{facts['errors']} of {facts['lines']} log lines of {service} contain {word!r} "
            f"in {win.describe()} ({facts['baseline_errors']} of {facts['baseline_lines']})"
            f"{recent_phrase(facts)} ({where})")  # fmt: skip
    if line_verdict(facts) == Verdict.SUPPORTS:
        rows = []
        for callee in called():
            got = _count(ctx, callee, word, win)
            if not isinstance(got, ToolResult) and got[1]["lines"]:
                rows.append({"server": callee, **_as_reading(got[1])})
        facts["callees"] = rows
        culprit = explained_by("error_lines", _as_reading(facts), rows, _judge, {"window": 1.0})
        if culprit is not None:
            row = next(r for r in rows if r["server"] == culprit)
            text += (f"; {culprit}, which it calls, logged as many more ({row['baseline']:.0f} "
                     f"→ {row['window']:.0f}): the errors come from {culprit}")  # fmt: skip
    if ctx.logs is not None:
        text += _with_patterns(ctx, ctx.logs, service, win.end, facts, called)
    return ToolResult(ToolStatus.SUCCESS, text, facts)


def _with_patterns(
    ctx: ToolContext, source: LogSource, service: str, end: float, facts: dict[str, Any],
    called: Callable[[], list[str]],
) -> str:  # fmt: skip
    """Adds the template tests' findings to `facts` (`patterns`, and `patterns_from`: the
    callee whose lines moved as strongly, among `called()`); returns what the check says of
    them."""
    spans = ctx.spans.spans(end - ALERT_LEAD_S - BASELINE_SPAN_S, end) if ctx.spans else ()
    caller = callers_of(spans)
    own = _patterns(source, service, end, caller)
    facts["patterns"] = [list(p) for p in own]
    if not own:
        return ""
    below = max(((_strength(source, c, end, caller), c) for c in called()),
                default=(0.0, ""))  # fmt: skip
    text = (f"; its lines moved otherwise in the {ALERT_LEAD_S / 60:g} min before the alert "
            f"vs the {BASELINE_SPAN_S / 60:g} before: {own[0][1]}")  # fmt: skip
    if below[0] >= own[0][0]:
        facts["patterns_from"] = below[1]
        text += f"; {below[1]}, which it calls, moved as strongly ({below[0]:.1f})"
    return text


def _as_reading(counts: Mapping[str, Any]) -> dict[str, Any]:
    """Error-line counts as `downstream` compares readings (window, baseline, lines)."""
    return {"window": float(counts["errors"]), "baseline": float(counts["baseline_errors"]),
            "lines": int(counts["lines"])}  # fmt: skip


def _judge(signal: str, w: float, b: float | None, share: float) -> Verdict:
    return line_verdict({"errors": w, "baseline_errors": b or 0.0, "lines": max(1, int(w))})


def _check(result: ToolResult, suspect: str, now: float, window_s: float) -> Verdict:
    if result.status != ToolStatus.SUCCESS:
        return Verdict.INCONCLUSIVE
    verdict = line_verdict(result.data)
    callees_ = result.data.get("callees") or ()
    if verdict == Verdict.SUPPORTS and explained_by(
        "error_lines", _as_reading(result.data), callees_, _judge, {"window": 1.0}
    ):
        verdict = Verdict.INCONCLUSIVE  # a callee's errors, logged by the suspect too
    if result.data.get("patterns"):  # its lines moved, if not to errors: no refutation
        own = not result.data.get("patterns_from")
        verdict = Verdict.SUPPORTS if own or verdict == Verdict.SUPPORTS else Verdict.INCONCLUSIVE
    return verdict


def _has_logs(ctx: ToolContext) -> bool:
    return bool(ctx.loki_url) or ctx.logs is not None


def loki_tool() -> Tool:
    return Tool(
        name="loki_query",
        description=(
            "Count a service's log lines containing a word (default 'error', any case) in "
            "Loki or the configured log files, in the alert window and in the window before it."
        ),
        parameters={
            "type": "object",
            "properties": {
                "service": service_param(),
                "contains": {
                    "type": "string",
                    "pattern": WORD,
                    "maxLength": 64,
                    "description": "A plain word or phrase (letters, digits, ' _.:/=-').",
                },
            },
            "required": ["service"],
        },
        run=_run,
        check=_check,
        source="Loki",
        prerequisites=(Prerequisite("a Loki URL or log files (logs_path)", _has_logs),),
        timeout_s=15.0,
    )
