"""`stackgraph program list|show|verify|run`: the read path's programs as data."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from .app import app, open_store, out, state_of

program_app = typer.Typer(help="Investigation programs: the operator library and playbooks.")
app.add_typer(program_app, name="program")


def _load(spec: str) -> Any:
    """A shipped playbook by name, or a program file (YAML or JSON)."""
    from stackgraph.errors import InputError
    from stackgraph.rca.programs import parse, playbook, playbook_names

    if spec in playbook_names():
        return playbook(spec)
    path = Path(spec)
    if not path.is_file():
        raise InputError(f"{spec!r} is neither a playbook ({', '.join(playbook_names())}) "
                         "nor a program file")  # fmt: skip
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read program file {path}: {exc}") from exc
    return parse(text, origin="file")


@program_app.command("list")
def list_cmd(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """The shipped playbooks, the operator library (signature, kind, source) and the
    synthesised operators the graph holds (admitted by `eval` with a model)."""
    from stackgraph import cypher
    from stackgraph.rca.programs import BUILTIN, playbook, playbook_names

    books = {n: playbook(n) for n in playbook_names()}
    settings = state_of(ctx).settings()
    with open_store(settings) as store:
        admitted = store.read(cypher.load("program_operators"))
    if as_json:
        data = {"playbooks": [{"name": n, "description": p.description,
                               "bindings": len(p.bindings), "digest": p.digest}
                              for n, p in books.items()],
                "operators": [op.describe() for op in BUILTIN.values()],
                "synthesised": admitted}  # fmt: skip
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    table = Table(title="playbooks")
    for col in ("name", "bindings", "digest", "description"):
        table.add_column(col)
    for n, p in books.items():
        table.add_row(n, str(len(p.bindings)), p.digest, p.description)
    out.print(table)
    ops = Table(title="operators")
    for col in ("signature", "kind", "source", "what"):
        ops.add_column(col)
    for op in BUILTIN.values():
        source = "prior" if op.prior else (op.source or "")
        ops.add_row(op.signature(), op.kind, source, op.doc)
    out.print(ops)
    if admitted:
        made = Table(title="synthesised operators (stage 3)")
        for col in ("name", "status", "uses", "digest"):
            made.add_column(col)
        for row in admitted:
            made.add_row(str(row["name"]), str(row["status"]), str(row["uses"] or 0),
                         str(row["digest"] or "")[:16])  # fmt: skip
        out.print(made)


@program_app.command("show")
def show(spec: Annotated[str, typer.Argument(help="A playbook name or a program file.")]) -> None:
    """The program as YAML."""
    sys.stdout.write(_load(spec).to_yaml())


@program_app.command("verify")
def verify_cmd(spec: Annotated[str, typer.Argument(help="A program file or playbook.")]) -> None:
    """Check a program against the library; every broken rule is named (exit 2)."""
    from stackgraph.rca.programs import BUILTIN, verify

    program = verify(_load(spec), BUILTIN)
    out.print(f"[green]ok[/green]: {program.name} ({len(program.bindings)} bindings, "
              f"digest {program.digest})")  # fmt: skip


@program_app.command("run")
def run_cmd(
    ctx: typer.Context,
    spec: Annotated[str, typer.Argument(help="A program file or playbook.")],
    service: Annotated[str, typer.Option("--service", help="The alerting service.")],
    at: Annotated[
        str | None, typer.Option("--at", help="On the graph as it was then (epoch s or ISO).")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", help="Candidates to show.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
) -> None:
    """Run a program as `investigate` runs the default one (the configured sources), and
    show the plan with what each binding cost."""
    from stackgraph.errors import InputError
    from stackgraph.rca import Alert, Planner, parse_time
    from stackgraph.rca.programs import BUILTIN, verify

    from .investigate import plan_json, print_plan

    program = verify(_load(spec), BUILTIN)
    when = None
    if at is not None:
        when = parse_time(at)
        if when is None:
            raise InputError(f"--at {at!r} is neither epoch seconds nor ISO 8601")
    settings = state_of(ctx).settings()
    planner = Planner.from_settings(settings)
    with open_store(settings) as store:
        inv = planner.investigation(store, Alert({"service": service}), at=when, as_of=when,
                                    limit=limit)  # fmt: skip
        plan = inv.plan(program)
    if as_json:
        sys.stdout.write(json.dumps(plan_json(plan), indent=2) + "\n")
        return
    print_plan(plan, out, top=limit)
    reads = plan.program.get("reads", [])
    if reads:
        costs = Table(title=f"program {program.name}: what each binding read")
        for col in ("binding", "op", "graph rows", "metric points"):
            costs.add_column(col)
        for c in reads:
            costs.add_row(c["binding"], c["op"], str(c["graph_rows"]), str(c["metric_points"]))
        out.print(costs)
        chosen = plan.program.get("chosen") or {}
        for binding, params in chosen.items():
            out.print(f"[dim]auto: {binding} {params}[/dim]")
