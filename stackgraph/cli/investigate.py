"""`stackgraph investigate`: an alert on a service → the ranked plan, as a table or JSON."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .app import app, open_store, out, state_of


def plan_json(plan: Any) -> dict[str, Any]:
    """The plan as the documented JSON: anchor, candidates (score, signals, paths, evidence)."""
    data: dict[str, Any] = plan.to_dict()
    data["candidates"] = [
        {
            "service": c["service"],
            "kind": c["kind"],
            "position": c["position"],
            "score": c["score"],
            "signals": c["signals"],
            "paths": [list(p) for p in c["paths"]],
            "evidence": c["evidence"],
            "suggested_tools": list(c["suggested_tools"]),
        }
        for c in data["candidates"]
    ]
    return data


SHOWN_SIGNAL_MIN = 0.005
"""A signal under this prints as 0.00: it says nothing, so the table leaves it out."""


def print_plan(plan: Any, console: Console, top: int = 10, evidence_for: int = 3) -> None:
    """Candidates with their score breakdown and top path, then the evidence of the first few."""
    if not plan.candidates:
        console.print(f"[yellow]no candidates[/yellow]: {plan.reason}")
        return
    table = Table(title=f"root-cause candidates for an alert on {plan.anchor!r} (hops {plan.hops})")
    for col in ("#", "service", "score", "signals", "top path"):
        table.add_column(col, justify="right" if col in {"#", "score"} else "left")
    for i, c in enumerate(plan.candidates[:top], 1):
        ranked = sorted(c.signals.items(), key=lambda kv: -kv[1])
        shown = [f"{k} {v:.2f}" for k, v in ranked if v >= SHOWN_SIGNAL_MIN]
        path = " → ".join(c.paths[0]) if c.paths else "-"
        table.add_row(str(i), c.service, f"{c.score:.3f}", ", ".join(shown[:4]), path)
    console.print(table)
    for c in plan.candidates[:evidence_for]:
        console.print(f"[bold]{c.service}[/bold] — tools: {', '.join(c.suggested_tools)}")
        for e in c.evidence:
            if e.signal == "topology" and len(c.evidence) > 1:
                continue
            prov = e.source + (f", {e.status}" if e.status else "")
            console.print(
                f"  {escape(f'[{e.signal}]')} {escape(e.summary)} [dim]({escape(prov)})[/dim]",
                highlight=False,
            )
    if plan.reason:
        console.print(f"[yellow]note[/yellow]: {plan.reason}")
    for note in plan.notes:
        console.print(f"[dim]note: {note}[/dim]")


@app.command()
def investigate(
    ctx: typer.Context,
    service: Annotated[str, typer.Option("--service", help="The alerting service.")],
    at: Annotated[
        str | None,
        typer.Option("--at", help="Investigate on the graph as it was then (epoch s or ISO 8601)."),
    ] = None,
    hops: Annotated[
        int | None,
        typer.Option("--hops", help="Neighbourhood depth, 1..4 (default: investigate_hops)."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", help="Candidates to show.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
) -> None:
    """Rank the likely root causes of an alert on SERVICE (fail-open: empty plan + reason).
    With PROMETHEUS_URL set, live metrics are probed (as the API does). With --at, the graph
    as it was then: facts first seen later are left out, and edges are Stale or Active as
    they were then."""
    from stackgraph.rca import Alert, Planner, parse_time

    when = None
    if at is not None:
        when = parse_time(at)
        if when is None:
            raise typer.BadParameter(f"--at {at!r} is neither epoch seconds nor ISO 8601")
    settings = state_of(ctx).settings()
    planner = Planner.from_settings(settings)
    with open_store(settings) as store:
        plan = planner(store, Alert({"service": service}), at=when, as_of=when, hops=hops,
                       limit=limit)  # fmt: skip
    if as_json:
        sys.stdout.write(json.dumps(plan_json(plan), indent=2) + "\n")
        return
    print_plan(plan, out, top=limit)
