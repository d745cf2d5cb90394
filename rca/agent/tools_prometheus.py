"""`prometheus_query`: one signal of a suspect in the alert window and in the baseline.

The model picks a *signal* (an enum) and a service; the PromQL is a constant template (the
read path's, `SIGNALS`) with the validated service name bound into a string literal and the
window length as a duration, so model text never becomes PromQL syntax. One `query_range`
with `step` equal to the window gives both numbers: the point at the alert time covers the
alert window, the point one window earlier covers the baseline. When that earlier point has
no data (a scrape gap, a recording made apart) and the plan found a baseline that holds some
(`rca.baseline`), one instant query reads the signal over the plan's baseline instead, and
the result says so: a level judged alone is the weakest verdict this tool gives. Two more
instant queries read the last `SHORT_S` before the alert and the read path's rate window
before it (`SHORTER`), each judged against the same baseline.
An error ratio or p95 that rose is checked against the calls the service makes
(`downstream`): a rise its callee's calls show as strongly is the callee's, not its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from stackgraph.config import Settings
from stackgraph.promql import PromQLNames, Templates, duration_s, render

from ..series import MIN_POINTS
from ..sources.prometheus import BUILTIN_KINDS
from ..sources.prometheus import TEMPLATES as READ_PATH
from ..windows import ALERT_LEAD_S, Windows
from .downstream import DOWNSTREAM, explained_by, read_callees
from .http_get import get_json
from .metrics_verdict import RESOURCES, SHORTER, check, judge, judged_windows, supporting_windows
from .prom_reads import finite, instant, readings
from .toolbox import Prerequisite, Tool, ToolContext, ToolResult, ToolStatus, service_param

AGENT = Templates(__package__ or "stackgraph.rca.agent")
"""The agent's own PromQL (`rca/agent/promql`), beside the read path's."""
SIGNALS: Mapping[str, str] = MappingProxyType(
    {
        "error_rate": "errors",
        "latency_p95": "callers_latency",
        "restarts": "errors/restarts",
        "cpu": "cpu",
        "memory": "memory_mean",
    }
)
"""signal → the read path's kind that measures it (`rca.sources.prometheus.BUILTIN_KINDS`:
its template, or the installation's replacement in `telemetry_extra_promql`), filled with
the installation's metric names and pod pattern (`ToolContext.promql`), so the agent checks
what the plan ranked on; else the agent's own template (`memory_mean`: the mean over the
window, where the read path samples, while the installation keeps the `memory` kind's;
`callers_latency`: the p95 of the calls into the service as its callers wait for them, the
read path's `latency/from:<caller>` over all callers, which the plan counts as the
service's own latency, so a delay on its network is its own and not its callers'). A rate
over the window gives the same error ratio and p95 as an increase would."""
READ_PATH_KIND: Mapping[str, str] = MappingProxyType(
    {"memory_mean": "memory", "callers_latency": "latency"}
)
"""The read path's kind an agent-own template stands in for; its replacement replaces both."""
FAILURES_RECORDED = "failures_recorded"
"""Whether Tempo recorded a failed call of any service: where none ever did (spans carry no
status), an error ratio of 0 is not measured, and refutes nothing."""

SHORT_S = ALERT_LEAD_S
"""The second, short window: the 5 minutes before the alert, over which an alerting rule's
cause had to move (`rca.windows`). Judged beside the long one (`ToolContext.window_s`), as
multiwindow alerting does, so a fault of the last minutes is not diluted in half an hour.
The third, `latest`, is the read path's rate window (`ToolContext.rate_window_s`) just
before the alert: an alert fires while its cause is present, and a fault that began a
minute or two before it fills that window where the short one still dilutes it. One
minute's reading wanders more than half an hour's, so it supports only beyond the band of
the baseline's own readings over a minute (`metrics_verdict.supporting_windows`)."""


def context_fields(settings: Settings) -> dict[str, Any]:
    """The `ToolContext` fields this tool reads, from the settings the read path reads."""
    return {
        "promql": PromQLNames.from_settings(settings),
        "promql_templates": dict(settings.telemetry_extra_promql),
        "latency_unit_s": settings.telemetry_latency_unit_s,
        "rate_window_s": duration_s(settings.metrics_window),
    }


def promql(
    names: PromQLNames, template: str, service: str, window_s: float, unit: float = 1.0
) -> str:
    """`template` filled for `service` over a window of `window_s` (whole seconds, at
    least a minute); its values times `unit` (a latency histogram's unit, in seconds)."""
    over = replace(names, window=f"{max(60, int(window_s))}s")
    text = render(template, over, service)
    return text if unit == 1.0 else f"({text}) * {unit!r}"


def _template(ctx: ToolContext, signal: str) -> str | None:
    """The PromQL template of `signal` here; None where the installation switched its kind
    off (an empty template in `telemetry_extra_promql`)."""
    kind, setting = SIGNALS[signal], _setting(signal)
    if setting in ctx.promql_templates:
        return ctx.promql_templates[setting].strip() or None
    if kind not in BUILTIN_KINDS:
        return AGENT.load(kind)
    return READ_PATH.load(BUILTIN_KINDS[kind])


def _setting(signal: str) -> str:
    """The kind that names `signal` in `telemetry_extra_promql`."""
    return READ_PATH_KIND.get(SIGNALS[signal], SIGNALS[signal])


def _unit(ctx: ToolContext, signal: str) -> float:
    """Seconds per unit of the signal's values as recorded: latency histograms may be in
    milliseconds (`telemetry_latency_unit_s`); the checks judge seconds."""
    return ctx.latency_unit_s if signal == "latency_p95" else 1.0


def _run(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    signal, service = str(args["signal"]), str(args["service"])
    win = Windows.ending_at(ctx.now(), ctx.window_s)
    template = _template(ctx, signal)
    if template is None:
        why = f"(telemetry_extra_promql {_setting(signal)!r} is empty)"
        return ToolResult(ToolStatus.NO_DATA, f"{signal} is switched off here {why}", {})
    query = promql(ctx.promql, template, service, win.span_s, _unit(ctx, signal))
    data = get_json(
        str(ctx.prometheus_url),
        "/api/v1/query_range",
        {"query": query, "start": f"{win.start:.3f}", "end": f"{win.end:.3f}",
         "step": f"{win.span_s:.3f}"},
        "Prometheus",
    )  # fmt: skip
    if isinstance(data, ToolResult):
        return data
    points: dict[str, list[float]] = {"window": [], "baseline": []}
    for series in data.get("result", []):
        for t, value in series.get("values", []):
            at = "window" if abs(float(t) - win.end) < 1e-3 else "baseline"
            number = finite(value)
            if number is not None:
                points[at].append(number)
    window = max(points["window"], default=None)
    baseline = max(points["baseline"], default=None)
    facts: dict[str, Any] = {"signal": signal, "window": window, "baseline": baseline,
                             "query": query, "window_s": win.span_s}  # fmt: skip
    if window is None:
        return ToolResult(ToolStatus.NO_DATA, f"no {signal} of {service} in the alert window",
                          facts)  # fmt: skip
    if signal == "error_rate" and window == 0 and not baseline:
        ever = promql(ctx.promql, AGENT.load(FAILURES_RECORDED), service, 2 * win.span_s)
        recorded = instant(ctx, ever, win.end)
        if isinstance(recorded, ToolResult):
            return recorded
        if recorded is None:
            return ToolResult(ToolStatus.NO_DATA, "no failed call of any service is recorded "
                              "(spans without a status?): an error ratio of 0 is not measured",
                              facts)  # fmt: skip
    last = ""
    shorter = _shorter(ctx, win)
    for key, span in shorter.items():
        read = instant(ctx, promql(ctx.promql, template, service, span, _unit(ctx, signal)),
                        win.end)  # fmt: skip
        if isinstance(read, ToolResult):
            return read
        if read is not None:
            facts.update({key: read, f"{key}_s": span})
            last += f", {_show(signal, read)} in the last {_span(span)}"
    if shorter and not any(key in facts for key in shorter):
        facts["stopped"] = True
        last += (f", no data in the last {_span(max(shorter.values()))}: its series stopped "
                 "before the alert")  # fmt: skip
    against = win.describe()
    older = _plan_baseline(ctx, win)
    if baseline is None and older is not None:
        found = _read_over(ctx, template, service, signal, older)
        if isinstance(found, ToolResult):
            return found
        if found is not None:
            facts.update(baseline=found, baseline_window=list(older))
            against = (f"the {win.span_s / 60:g} min before the alert vs the plan's baseline, "
                       f"{(win.start - older[1]) / 3600:.1f} h earlier")  # fmt: skip
    inner = _inner_baseline(ctx, win, facts) if signal in RESOURCES else None
    if facts["baseline"] is None and inner is not None:
        found = _read_over(ctx, template, service, signal, inner)
        if isinstance(found, ToolResult):
            return found
        if found is not None:
            facts.update(inner_baseline=found, inner_baseline_window=list(inner))
            last += f"; the plan's baseline before them {_show(signal, found)}"
    if facts.get("latest") is not None:
        base = facts.get("baseline_window") or win.baseline
        latest_q = promql(ctx.promql, template, service, ctx.rate_window_s, _unit(ctx, signal))
        over = (float(base[0]), float(base[1]))
        band = readings(ctx, latest_q, over, ctx.rate_window_s)
        if isinstance(band, ToolResult):
            return band
        elsewhere = _band_elsewhere(ctx, win, over, len(band))
        if elsewhere is not None:
            band = readings(ctx, latest_q, elsewhere, ctx.rate_window_s)
            if isinstance(band, ToolResult):
                return band
            facts["latest_band_window"] = list(elsewhere)
        facts["latest_band"] = band
    facts["resolution_s"] = min(float(facts.get(f"{k}_s") or win.span_s) for k in SHORTER)
    text = (f"{service} {signal.replace('_', ' ')} {_show(signal, window)} in {against} "
            f"({_show(signal, facts['baseline'])}){last} (Prometheus)")  # fmt: skip
    if signal in DOWNSTREAM and not facts.get("stopped"):  # a stopped series judges nothing
        text += _callees(ctx, signal, service, win, facts)
    return ToolResult(ToolStatus.SUCCESS, text, facts)


def _callees(
    ctx: ToolContext, signal: str, service: str, win: Windows, facts: dict[str, Any]
) -> str:
    """Reads the calls `service` makes into `facts["callees"]`; the sentence to add when
    one of them explains the rise (`downstream`), or says they could not be read."""
    older = facts.get("baseline_window")
    rows = read_callees(
        ctx,
        lambda span: promql(
            ctx.promql, AGENT.load(DOWNSTREAM[signal]), service, span, _unit(ctx, signal)
        ),
        win,
        {key: float(facts[f"{key}_s"]) for key in SHORTER if facts.get(key) is not None},
        (float(older[0]), float(older[1])) if older else None,
    )
    if isinstance(rows, ToolResult):
        return f"; its calls to other services could not be read ({rows.summary})"
    facts["callees"] = rows
    callee = explained_by(signal, facts, rows, judge, supporting_windows(facts, win.span_s))
    if callee is None:
        return ""
    row = next(r for r in rows if r["server"] == callee)
    return (f"; its calls to {callee} rose as much ({_show(signal, row['baseline'])} → "
            f"{_show(signal, row['window'])}): the rise comes from {callee}")  # fmt: skip


def _shorter(ctx: ToolContext, win: Windows) -> dict[str, float]:
    """The windows judged beside the long one (`SHORT_S`), each shorter than the last."""
    spans: dict[str, float] = {}
    longest = win.span_s
    for key, span in zip(SHORTER, (SHORT_S, ctx.rate_window_s), strict=True):
        if span < longest:
            spans[key] = longest = span
    return spans


def _span(seconds: float) -> str:
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


def _plan_baseline(ctx: ToolContext, win: Windows) -> tuple[float, float] | None:
    """The read path's baseline, when the equal span before the window held nothing: the
    plan found it holds data (moved back past a gap, `rca.baseline`), and one investigation
    should compare with one baseline rather than judge levels alone."""
    base = ctx.plan.baseline if ctx.plan is not None else None
    if base is None or not base[0] < base[1] <= win.start:
        return None
    return base


def _read_over(
    ctx: ToolContext, template: str, service: str, signal: str, span: tuple[float, float]
) -> float | ToolResult | None:
    """The signal over one earlier span (a baseline the long window's step did not read)."""
    query = promql(ctx.promql, template, service, span[1] - span[0], _unit(ctx, signal))
    return instant(ctx, query, span[1])


def _inner_baseline(
    ctx: ToolContext, win: Windows, facts: Mapping[str, Any]
) -> tuple[float, float] | None:
    """The read path's baseline where it lies inside the long window, ending before the
    last 5 minutes start: there it is what was before them, as the plan compared. Only
    those 5 minutes are judged against it (`metrics_verdict.check`): one minute's reading
    wanders, and its band is the agent's own baseline's, which is missing here."""
    base = ctx.plan.baseline if ctx.plan is not None else None
    short_s = facts.get("short_s")
    if base is None or short_s is None:
        return None
    if not win.start <= base[0] < base[1] <= win.end - float(short_s):
        return None
    return base


def _band_elsewhere(
    ctx: ToolContext, win: Windows, read: tuple[float, float], held: int
) -> tuple[float, float] | None:
    """The read path's baseline, where the span `read` holds too few readings to tell how
    far one minute wanders (a recording, or a service, younger than the look-back), the read
    path's is another span and ends before the last minute: it was chosen for holding data,
    and one investigation should compare with one baseline rather than judge levels alone."""
    base = ctx.plan.baseline if ctx.plan is not None else None
    if held >= MIN_POINTS or base is None or tuple(base) == read:
        return None
    return base if base[1] <= win.end - ctx.rate_window_s else None


def _show(signal: str, value: float | None) -> str:
    if value is None:
        return "no data"
    if signal == "error_rate":
        return f"{100 * value:.3g}%"
    if signal == "cpu":
        return f"{value:.3g} cores"
    if signal == "memory":
        return f"{value / 2**20:.0f} MiB"
    if signal == "latency_p95":
        return f"{1000 * value:.0f} ms"
    return f"{value:.0f}"


def prometheus_tool() -> Tool:
    return Tool(
        name="prometheus_query",
        description=(
            "Measure one signal of a service in Prometheus in the alert window and in the "
            "window before it: error_rate (failed/total calls into it), latency_p95 "
            "(seconds), restarts (pod restarts), cpu (cores), memory (working-set bytes)."
        ),
        parameters={
            "type": "object",
            "properties": {
                "service": service_param(),
                "signal": {"type": "string", "enum": sorted(SIGNALS)},
            },
            "required": ["service", "signal"],
        },
        run=_run,
        check=check,
        source="Prometheus",
        prerequisites=(Prerequisite("a Prometheus URL", lambda c: bool(c.prometheus_url)),),
        timeout_s=15.0,
        judged_windows=judged_windows,
    )
