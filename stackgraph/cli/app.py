"""The typer app, global options and helpers every command module shares."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from stackgraph.config import Settings, load_settings
from stackgraph.errors import StackGraphError

app = typer.Typer(
    help="StackGraph: a property-graph world-model of your platform for root-cause analysis.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
graph_app = typer.Typer(help="Inspect the graph.", no_args_is_help=True)
schema_app = typer.Typer(
    help="The schema: labels, keys, edge types, indexes.", no_args_is_help=True
)
db_app = typer.Typer(help="The embedded FalkorDB server of the data dir.", no_args_is_help=True)
app.add_typer(graph_app, name="graph")
app.add_typer(schema_app, name="schema")
app.add_typer(db_app, name="db")

out = Console()
err = Console(stderr=True)

COMMANDS_GROUP = "stackgraph.commands"
"""Entry-point group of commands installed beside the built-in ones (`stackgraph demo`)."""


def add_installed_commands(target: typer.Typer) -> list[str]:
    """Add each command registered under `COMMANDS_GROUP` (name = a typer command function)
    that does not shadow a built-in one; return the names added. A command that fails to
    load is reported on stderr and left out, so one broken package never breaks the CLI."""
    taken = {c.name or getattr(c.callback, "__name__", "") for c in target.registered_commands}
    taken |= {g.name or "" for g in target.registered_groups}
    added = []
    for ep in entry_points(group=COMMANDS_GROUP):
        if ep.name in taken:
            continue
        try:
            command = ep.load()
        except Exception as exc:  # a third party's import error must not stop `stackgraph`
            err.print(f"command {ep.name!r} ({ep.value}) not loaded: {exc}", markup=False)
            continue
        target.command(ep.name)(command)
        taken.add(ep.name)
        added.append(ep.name)
    return added


@dataclass
class State:
    config: Path | None = None
    data_dir: Path | None = None
    graph: str | None = None

    def settings(self, **overrides: Any) -> Settings:
        return load_settings(self.config, data_dir=self.data_dir, graph=self.graph, **overrides)


@app.callback()
def _global(
    ctx: typer.Context,
    config: Annotated[
        Path | None, typer.Option("--config", help="YAML config file (env STACKGRAPH_* wins).")
    ] = None,
    data_dir: Annotated[
        Path | None, typer.Option("--data-dir", help="Data dir (env STACKGRAPH_DATA_DIR).")
    ] = None,
    graph: Annotated[
        str | None, typer.Option("--graph", help="Graph key (env STACKGRAPH_GRAPH).")
    ] = None,
) -> None:
    ctx.obj = State(config, data_dir, graph)


def state_of(ctx: typer.Context) -> State:
    obj = ctx.find_root().obj
    return obj if isinstance(obj, State) else State()


@contextmanager
def open_store(settings: Settings) -> Iterator[Any]:
    from stackgraph.store import GraphStore

    with GraphStore.open(settings) as store:
        yield store


def _progress() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    )


def report_table(report: Any, title: str) -> Table:
    table = Table(title=title)
    for col in ("kind", "name", "created", "updated", "unchanged"):
        table.add_column(
            col, justify="right" if col in {"created", "updated", "unchanged"} else "left"
        )
    for kind, rows in (("node", report.nodes), ("edge", report.edges)):
        for name, c in sorted(rows.items()):
            table.add_row(kind, name, str(c.created), str(c.updated), str(c.unchanged))
    return table


def run_ingest(
    settings: Settings,
    lanes: str,
    *,
    catalog: Path | None = None,
    manifests: Path | None = None,
    repos: tuple[Path, ...] = (),
    options: dict[str, Any] | None = None,
    store: Any = None,
) -> Any:
    """`stackgraph.ingest.run_lanes` with a progress bar, on `store` or the configured one.

    A lane whose source fails (Prometheus down, no cluster, a bad file) does not stop the
    lanes after it: they are still written, and the first failure is raised at the end."""
    from stackgraph.ingest import run_lanes

    def run(st: Any) -> tuple[Any, list[StackGraphError]]:
        with _progress() as progress:

            def track(name: str, size: int) -> Any:
                task = progress.add_task(f"ingest {name}", total=size)
                return lambda n: progress.advance(task, n)

            return run_lanes(st, settings, lanes, catalog=catalog, manifests=manifests,
                             repos=repos, options=options, progress=track)  # fmt: skip

    if store is not None:
        report, failures = run(store)
    else:
        with open_store(settings) as st:
            report, failures = run(st)
    if len(failures) > 1 or (failures and "," in lanes):
        for exc in failures:
            err.print(f"lane failed: {exc}", markup=False)
    if failures:
        raise failures[0]
    return report


def print_report(report: Any, as_json: bool) -> None:
    if as_json:
        out.print_json(data=report.as_dict())
    else:
        out.print(report_table(report, "ingest"))
    if report.stale and not as_json:
        marked = ", ".join(f"{n} {name}" for name, n in sorted(report.stale.items()))
        out.print(f"marked Stale: {marked}")
    if report.rejected:
        for r in report.rejected[:50]:
            err.print(f"[red]rejected[/red] {escape(str(r))}", markup=True, highlight=False)
        if len(report.rejected) > 50:
            err.print(f"... and {len(report.rejected) - 50} more")
        err.print(f"{len(report.rejected)} record(s) rejected")
