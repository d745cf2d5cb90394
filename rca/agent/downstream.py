"""Whether a service's own error ratio, p95 or error lines moved because of the calls it
makes.

A fault in C shows on the calls into C and, propagated, on the calls into every caller of C:
a caller S of a failing C fails and slows too. The read path ranks by that rule (the
frontier: `rca.scorers.telemetry`, `traversal`); `prometheus_query` applies it to what it
measures. A rise of S's error ratio or p95 supports S only where no callee's calls from S,
measured the same way in the same window, support as strongly: the symmetric relative
change (`rca.series.relative_change`, the read path's unit of change) of the callee's at
least equal to S's. Where one does, S's rise is the callee's seen through S, and the check
says so and is inconclusive for S (a tie goes to the callee, the deeper of the two, as in
the read path's frontier).

One more range query (and one instant query per shorter window) per check, by `server`,
over the series whose `client` is S: Tempo's service graph keeps both labels. Log lines
carry no caller, so `loki_query` asks the graph for the services S calls (`callees`) and
counts theirs the same way: a callee's error lines that rose as strongly explain S's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from stackgraph import cypher
from stackgraph.errors import StackGraphError

from ..series import relative_change
from ..windows import Windows
from .evidence import Verdict, optional_number
from .http_get import get_json
from .toolbox import ToolContext, ToolResult

__all__ = [
    "DOWNSTREAM",
    "MAX_CALLEES",
    "callees",
    "callees_to_read",
    "explained_by",
    "read_callees",
]

DOWNSTREAM: Mapping[str, str] = MappingProxyType(
    {"error_rate": "callee_errors", "latency_p95": "callee_latency"}
)
"""signal → the template (`rca/agent/promql`) of its value per callee (`server`) of the
calls a service makes."""

Judge = Callable[[str, float, float | None, float], Verdict]
MAX_CALLEES = 20
"""Callees whose log lines are counted beside a suspect's: a bound on one check's reads."""


def callees(
    store: Any, service: str, limit: int | None = MAX_CALLEES, suspects: Sequence[str] = ()
) -> list[str]:
    """The services `service` calls, by the graph (none when it cannot be read): the first
    `limit` (None: all), since a check that reads each one's data is bounded, taken in the
    order of `suspects` (the plan's), then by name: where a gateway calls forty services,
    the ones the plan found something on are the ones that could explain it."""
    if store is None:
        return []
    try:
        rows = store.read(cypher.load("sg_neighbours_out"), {"names": [service], "limit": 500})
    except StackGraphError:
        return []
    found = {str((r.get("b") or {}).get("name") or "") for r in rows if r.get("type") == "CALLS"}
    order = {name: i for i, name in enumerate(suspects)}
    named = sorted(
        (n for n in found if n and n != service), key=lambda n: (order.get(n, len(order)), n)
    )
    return named[:limit]


def callees_to_read(ctx: ToolContext, service: str) -> list[str]:
    """The callees a check reads the data of: MAX_CALLEES of them, the plan's first."""
    plan = [c.service for c in ctx.plan.candidates] if ctx.plan else []
    return callees(ctx.store, service, MAX_CALLEES, plan)


def _by_server(data: Mapping[str, Any]) -> dict[str, list[tuple[float, float]]]:
    """(time, value) per `server` of a range (`values`) or instant (`value`) answer."""
    out: dict[str, list[tuple[float, float]]] = {}
    for series in data.get("result", []):
        server = str((series.get("metric") or {}).get("server", ""))
        rows = series.get("values") or ([series["value"]] if "value" in series else [])
        for t, value in rows:
            number = float(value)
            if server and math.isfinite(number):
                out.setdefault(server, []).append((float(t), number))
    return out


def read_callees(
    ctx: ToolContext,
    query: Callable[[float], str],
    win: Windows,
    shorter: Mapping[str, float],
    older: tuple[float, float] | None,
) -> list[dict[str, Any]] | ToolResult:
    """Each callee's value in the window, the equal span before it (or `older`, the plan's
    baseline, when the check compared with that) and each window of `shorter` (key → span,
    ending at the alert): `query(span_s)` is the PromQL over a span."""
    url = str(ctx.prometheus_url)
    data = get_json(url, "/api/v1/query_range", {
        "query": query(win.span_s), "start": f"{win.start:.3f}", "end": f"{win.end:.3f}",
        "step": f"{win.span_s:.3f}",
    }, "Prometheus")  # fmt: skip
    if isinstance(data, ToolResult):
        return data
    rows: dict[str, dict[str, Any]] = {}
    for server, points in _by_server(data).items():
        row = rows.setdefault(server, {"server": server, "window": None, "baseline": None})
        for t, v in points:
            row["window" if abs(t - win.end) < 1e-3 else "baseline"] = v
    extra = [(key, span, win.end) for key, span in shorter.items()]
    if older is not None:
        extra.append(("baseline", older[1] - older[0], older[1]))
    for field, span, at in extra:
        found = get_json(url, "/api/v1/query", {"query": query(span), "time": f"{at:.3f}"},
                         "Prometheus")  # fmt: skip
        if isinstance(found, ToolResult):
            return found
        for server, points in _by_server(found).items():
            rows.setdefault(server, {"server": server, "window": None, "baseline": None})
            rows[server][field] = points[-1][1]
    return sorted(rows.values(), key=lambda r: r["server"])


def explained_by(
    signal: str,
    own: Mapping[str, Any],
    callees: Sequence[Mapping[str, Any]],
    judge: Judge,
    shares: Mapping[str, float],
) -> str | None:
    """The callee whose calls explain every window in which `own` supports, the one that
    rose most in the first (None: some supporting window is the service's own). `own` and
    each callee hold `baseline` and a reading per window of `shares` (key → the window's
    length over the long one's)."""
    if not callees:
        return None
    supporting = [
        (key, part)
        for key, part in shares.items()
        if own.get(key) is not None
        and judge(signal, float(own[key]), optional_number(own.get("baseline")), part)
        == Verdict.SUPPORTS
    ]
    if not supporting:
        return None
    found: str | None = None
    for key, part in supporting:
        rise = _rise(own, key)
        best = sorted(
            (-_rise(c, key), str(c["server"]))
            for c in callees
            if c.get(key) is not None and c.get("baseline") is not None
            and judge(signal, float(c[key]), float(c["baseline"]), part) == Verdict.SUPPORTS
            and _rise(c, key) >= rise
        )  # fmt: skip
        if not best:
            return None
        found = found or best[0][1]
    return found


def _rise(reading: Mapping[str, Any], key: str) -> float:
    base = reading.get("baseline")
    return relative_change(float(reading[key]), 0.0 if base is None else float(base))
