"""`stackgraph code search|refs`: from meaning to code to services, and back."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.table import Table

from .app import app, open_store, out, state_of

code_app = typer.Typer(help="Search code by meaning; list a service's code.", no_args_is_help=True)
app.add_typer(code_app, name="code")


@code_app.command("search")
def search(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="What the code does, in words.")],
    limit: Annotated[int, typer.Option("--limit", min=1, max=100)] = 10,
    service: Annotated[str | None, typer.Option(help="Only this service's code.")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Code chunks nearest in meaning to TEXT, each with its owning service."""
    from stackgraph.memory.code_index import CodeIndex
    from stackgraph.memory.code_search import search_code

    settings = state_of(ctx).settings()
    with CodeIndex.open(settings) as index, open_store(settings) as store:
        hits = search_code(index, store, text, limit, service)
    if as_json:
        sys.stdout.write(json.dumps(hits) + "\n")
        return
    out.print(hits_table(hits, text))


def hits_table(hits: list[dict[str, object]], text: str) -> Table:
    table = Table(title=f"code search: {text!r}")
    for col in ("score", "service", "path", "symbol"):
        table.add_column(col, justify="right" if col == "score" else "left")
    for h in hits:
        table.add_row(f"{h['score']:.3f}", str(h["service"]), f"{h['path']}:{h['line']}",
                      str(h["symbol"]))  # fmt: skip
    if not hits:
        table.add_row("-", "(no code indexed: run `stackgraph ingest --lanes code`)", "", "")
    return table


@code_app.command("refs")
def refs(
    ctx: typer.Context,
    service: Annotated[str, typer.Argument(help="Service name.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """The service's code files with the endpoints, subjects, calls and stores they hold."""
    from stackgraph.memory.code_search import code_refs

    with open_store(state_of(ctx).settings()) as store:
        rows = code_refs(store, service)
    if as_json:
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    table = Table(title=f"code of service {service!r}")
    for col in ("path", "endpoints", "nats", "calls", "reads from"):
        table.add_column(col)
    for r in rows:
        nats = [f"pub {s}" for s in r["publishes"]] + [f"sub {s}" for s in r["consumes"]]
        table.add_row(r["path"], "\n".join(r["endpoints"]), "\n".join(nats),
                      ", ".join(r["calls"]), ", ".join(r["reads_from"]))  # fmt: skip
    if not rows:
        table.add_row(f"(no code known for {service!r})", "", "", "", "")
    out.print(table)
