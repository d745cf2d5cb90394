"""`stackgraph knowledge list|show|diff|revert`, `stackgraph trajectories export|calibration`
and `stackgraph evolve`: what the platform learned from its investigations, and how."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.table import Table

from .app import app, open_store, out, state_of

knowledge_app = typer.Typer(help="Layered knowledge K0-K3: versions, what each holds, revert.")
trajectories_app = typer.Typer(help="Every investigation as data, labelled by feedback.")
app.add_typer(knowledge_app, name="knowledge")
app.add_typer(trajectories_app, name="trajectories")


def _time(text: str | None) -> float:
    from stackgraph.errors import InputError
    from stackgraph.rca import parse_time

    if text is None:
        return 0.0
    when = parse_time(text)
    if when is None:
        raise InputError(f"--since {text!r} is neither epoch seconds nor ISO 8601")
    return when


@knowledge_app.command("list")
def list_cmd(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Every version, newest first: parent, what made it, its digest, which is live."""
    from stackgraph.memory.knowledge import versions

    with open_store(state_of(ctx).settings()) as store:
        rows = versions(store)
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2, default=str) + "\n")
        return
    table = Table(title="knowledge versions")
    for col in ("version", "live", "parent", "items", "digest", "what made it"):
        table.add_column(col)
    for r in rows:
        parent = "" if r.get("parent") in (None, -1) else str(r["parent"])
        cells = (r["version"], "yes" if r.get("live") else "", parent, r.get("items") or 0,
                 r.get("digest") or "", r.get("note"))  # fmt: skip
        table.add_row(*(str(c) for c in cells))
    out.print(table)


def _version(store: Any, number: int | None) -> Any:
    from stackgraph.memory.knowledge import live, version

    return live(store) if number is None else version(store, number)


@knowledge_app.command("show")
def show(
    ctx: typer.Context,
    number: Annotated[int | None, typer.Argument(help="A version (default: the live one).")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """One version's items, by tier, with their provenance and the gates it passed."""
    with open_store(state_of(ctx).settings()) as store:
        k = _version(store, number)
    if as_json:
        sys.stdout.write(json.dumps(k.to_dict(), indent=2, default=str) + "\n")
        return
    out.print(f"knowledge version {k.version} (parent {k.parent}, digest {k.digest}): {k.note}")
    for item in sorted(k.items, key=lambda i: (i.tier, i.id)):
        made = item.provenance.get("source", "?")
        out.print(f"  {item.tier} {item.polarity} [{item.signature}] {item.id}: {item.text} "
                  f"[dim]({made})[/dim]", highlight=False)  # fmt: skip


@knowledge_app.command("diff")
def diff(ctx: typer.Context, a: int, b: int) -> None:
    """Items added (+), removed (-) and changed (~) from version A to version B."""
    with open_store(state_of(ctx).settings()) as store:
        old, new = _version(store, a), _version(store, b)
    was = {i.id: i for i in old.items}
    now = {i.id: i for i in new.items}
    for key in sorted(was.keys() | now.keys()):
        if key not in was:
            out.print(f"+ {key}: {now[key].text}", highlight=False)
        elif key not in now:
            out.print(f"- {key}: {was[key].text}", highlight=False)
        elif was[key] != now[key]:
            out.print(f"~ {key}: {was[key].text} -> {now[key].text}", highlight=False)


@knowledge_app.command("revert")
def revert(ctx: typer.Context, number: int) -> None:
    """Make version NUMBER's items live again, as a new version (nothing is deleted)."""
    from stackgraph.ingest import GraphIngestor
    from stackgraph.memory.knowledge import Knowledge, live, promotion_records, versions

    with open_store(state_of(ctx).settings()) as store:
        target = _version(store, number)
        newest = max(int(r["version"]) for r in versions(store))
        k = Knowledge(newest + 1, target.items, live(store).version,
                      f"revert to version {number}", {"reverted_to": number})  # fmt: skip
        with GraphIngestor(store, who="knowledge") as writer:
            writer.write(promotion_records(k))
    out.print(f"version {k.version} is live: the items of version {number}")


@trajectories_app.command("export")
def export(
    ctx: typer.Context,
    since: Annotated[str | None, typer.Option(help="Opened since (epoch s or ISO 8601).")] = None,
    label: Annotated[str | None, typer.Option(help="correct, partial, wrong or pending.")] = None,
) -> None:
    """The stored trajectories as JSON lines, oldest first."""
    from stackgraph.memory.knowledge import trajectories

    with open_store(state_of(ctx).settings()) as store:
        for t in trajectories(store, _time(since)):
            if label is None or t.label == label:
                sys.stdout.write(json.dumps(t.to_dict(), sort_keys=True, default=str) + "\n")


@trajectories_app.command("calibration")
def calibration(
    ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False
) -> None:
    """How often conclusions on each evidence (state and confidence) were confirmed by
    feedback, and the confidence a conclusion on such evidence states now (the newest 1,000
    with feedback)."""
    from stackgraph.memory.knowledge import outcome_history

    with open_store(state_of(ctx).settings()) as store:
        rows = [c.as_dict() for c in outcome_history(store).table()]
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    table = Table(title="stated confidence, calibrated by feedback")
    table.add_column("state")
    for col in ("evidence's confidence", "conclusions with feedback", "confirmed", "stated now"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(str(r["state"] or "-"), f"{r['evidence']:.3f}", str(r["earlier"]),
                      str(r["right"]), f"{r['stated']:.3f}")  # fmt: skip
    out.print(table if rows else "no concluded incident has feedback yet")


@app.command("evolve")
def evolve_cmd(
    ctx: typer.Context,
    since: Annotated[str | None, typer.Option(help="Trajectories opened since then.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Judge, promote nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Mine the labelled trajectories into proposals and put each through the dual gate on
    a sandbox copy of the graph; promote what passes both (a new knowledge version)."""
    from stackgraph.eval.evolution import evolve

    settings = state_of(ctx).settings()
    with open_store(settings) as store:
        report = evolve(store, settings, since=_time(since), dry_run=dry_run)
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2, default=str) + "\n")
        return
    out.print(f"{report['trajectories']} labelled trajectories, {report['proposals']} "
              f"proposal(s): {report['admitted']} admitted, {report['rejected_inner']} rejected "
              f"by the inner gate, {report['rejected_outer']} by the outer gate"
              + (" (dry run: nothing promoted)" if dry_run else ""))  # fmt: skip
    for v in report["verdicts"]:
        gate = v["outer"] or v["inner"]
        mark = "admitted" if v["promoted"] is not None else f"rejected ({gate['gate']})"
        out.print(f"  {mark}: {v['proposal']['op']} {v['proposal']['item']['id']}: "
                  f"{gate['why']}", highlight=False)  # fmt: skip
