"""Templates to HTML responses: one autoescaping Jinja2 environment, the drawing's colour and
line-style legend, and the security headers every page carries."""

from __future__ import annotations

import time
from functools import cache
from importlib import resources
from typing import Any, TypeVar

from fastapi.responses import HTMLResponse, Response
from jinja2 import Environment, FileSystemLoader

R = TypeVar("R", bound=Response)

__all__ = ["CSP", "EDGE_STYLE", "STATE_FILL", "age", "page", "secure_headers", "when"]

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
"""No script, no inline style, nothing from elsewhere: the pages work without script, so a
text that slipped through escaping still could not run."""

STATE_FILL = {
    "Validated": "#c62828",
    "Supported": "#ef6c00",
    "Candidate": "#1e88e5",
    "Refuted": "#9e9e9e",
    None: "#ffffff",
}
"""Node colour by hypothesis state (None: a service on a path, not a candidate)."""

EDGE_STYLE: dict[str, tuple[str, str]] = {
    "Tempo": ("#37474f", "Tempo (traces)"),
    "StaticInfra": ("#00897b", "catalog / infra"),
    "StaticCode": ("#8e24aa", "code"),
    "plan": ("#bdbdbd", "plan path, no edge in the graph"),
}
"""Edge colour by provenance; status sets the dash (Stale dashed, Candidate dotted)."""
OTHER_SOURCE = ("#6d4c41", "other source")
DASH = {"Stale": "7 5", "Candidate": "2 4", "Deprecated": "2 4"}


def edge_stroke(source: str) -> str:
    return EDGE_STYLE.get(source, OTHER_SOURCE)[0]


def edge_dash(status: str) -> str:
    return DASH.get(status, "")


def age(seconds: float) -> str:
    """A duration as people read it: 45 s, 12 min, 3 h, 2 d."""
    s = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if s >= size:
            return f"{s // size} {unit}"
    return f"{s} s"


def when(epoch: float | None) -> str:
    if epoch is None:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(epoch))


@cache
def environment() -> Environment:
    folder = resources.files(__package__).joinpath("templates")
    env = Environment(
        loader=FileSystemLoader(str(folder)),
        autoescape=True,  # service names, log lines and reports are untrusted text
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(STATE_FILL=STATE_FILL, EDGE_STYLE=EDGE_STYLE, DASH=DASH)
    env.filters.update(stroke=edge_stroke, dash=edge_dash, age=age, when=when)
    return env


def secure_headers(response: R) -> R:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["Cache-Control"] = "no-store"
    return response


def page(template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    html = environment().get_template(template).render(**context)
    return secure_headers(HTMLResponse(html, status_code=status_code))
