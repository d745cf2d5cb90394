"""Whether a suspect's log lines show a code path that stopped running: the read path's
test (`rca.scorers.logs.dropped`, a template whose share of the service's lines fell), on
the read path's log source (`ToolContext.logs`, Loki or files), over the tool's windows.

An exception thrown between two log statements leaves the first and silences the second,
and writes no error line where the service catches it: counting error lines alone would
find the service healthy. A caller of a failing service takes its error path too, so a
callee whose template fell as far explains the suspect's (the frontier rule of
`downstream`): the check then names it and judges nothing.
"""

from __future__ import annotations

import math
from typing import Any

from ..model import LogSource
from ..scorers.logs import MIN_BASELINE_LINES, OUT_P, dropped, mine
from ..windows import Windows
from .downstream import callees
from .toolbox import ToolContext

__all__ = ["describe", "silent_template"]


def _fell(source: LogSource, service: str, win: Windows) -> dict[str, Any] | None:
    b0 = win.baseline[0]  # each window read on its own: a source bounds lines per read
    base = [x for x in source.lines(service, b0, win.start) if win.which(x.t) == "baseline"]
    alert = [x for x in source.lines(service, win.start, win.end) if win.which(x.t) == "window"]
    if len(base) < MIN_BASELINE_LINES or not alert:
        return None
    t = mine(base, alert, mid=(b0 + win.start) / 2)
    s, k = dropped(t)
    if k is None or s < -math.log10(OUT_P):
        return None
    return {"service": service, "template": t.names[k][:120], "window": t.alert.get(k, 0),
            "window_lines": sum(t.alert.values()), "baseline": t.base[k],
            "baseline_lines": sum(t.base.values()), "surprise": round(s, 2)}  # fmt: skip


def silent_template(ctx: ToolContext, service: str, win: Windows) -> dict[str, Any] | None:
    """The template of `service` that fell silent, with `from`: the callee whose own fell as
    far, if one did (None: nothing fell, or no log source to read lines from)."""
    if ctx.logs is None:
        return None
    own = _fell(ctx.logs, service, win)
    if own is None:
        return None
    for callee in callees(ctx.store, service):
        theirs = _fell(ctx.logs, callee, win)
        if theirs is not None and theirs["surprise"] >= own["surprise"]:
            return {**own, "from": callee}
    return {**own, "from": None}


def describe(found: dict[str, Any]) -> str:
    """The finding as the tool's summary says it."""
    text = (
        f"its template {found['template']!r} fell silent: {found['window']} of "
        f"{found['window_lines']} lines, {found['baseline']} of {found['baseline_lines']} "
        f"before (surprise {found['surprise']:.1f}): a code path that stopped running"
    )
    if found["from"]:
        text += f"; so did one of {found['from']}, which it calls: it comes from {found['from']}"
    return text
