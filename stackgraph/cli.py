"""The `stackgraph` command line (typer + rich)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from stackgraph.errors import StackGraphError

from .config import Settings, load_settings

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

REPO_ROOT = Path(__file__).resolve().parents[1]


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
        Path | None, typer.Option("--data-dir", help="Data dir [env STACKGRAPH_DATA_DIR].")
    ] = None,
    graph: Annotated[
        str | None, typer.Option("--graph", help="Graph key [env STACKGRAPH_GRAPH].")
    ] = None,
) -> None:
    ctx.obj = State(config, data_dir, graph)


def _state(ctx: typer.Context) -> State:
    obj = ctx.find_root().obj
    return obj if isinstance(obj, State) else State()


@contextmanager
def open_store(settings: Settings) -> Iterator[Any]:
    from .store import GraphStore

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
    """Collect the named lanes and write their records through the single writer."""
    from stackgraph.ingest import GraphIngestor, IngestReport, LaneInputs, resolve
    from stackgraph.schema import RecordBatch

    chosen = resolve(lanes)
    inputs = LaneInputs(settings, catalog, manifests, repos, options or {})
    batches: list[tuple[str, RecordBatch]] = [(lane.name, lane.collect(inputs)) for lane in chosen]
    total = sum(len(b.nodes) + len(b.edges) for _, b in batches)
    report = IngestReport()

    def write(st: Any) -> None:
        writer = GraphIngestor(st, settings.batch_size, settings.lease_ttl_s, who="ingest")
        with writer, _progress() as progress:
            task = progress.add_task("ingest", total=total)
            for name, batch in batches:
                progress.update(task, description=f"ingest {name}")
                report.merge(writer.write(batch, lambda n: progress.advance(task, n)))

    if store is not None:
        write(store)
    else:
        with open_store(settings) as st:
            write(st)
    return report


def _print_report(report: Any, as_json: bool) -> None:
    if as_json:
        out.print_json(data=report.as_dict())
    else:
        out.print(report_table(report, "ingest"))
    if report.rejected:
        for r in report.rejected[:50]:
            err.print(f"[red]rejected[/red] {r}", markup=True, highlight=False)
        if len(report.rejected) > 50:
            err.print(f"... and {len(report.rejected) - 50} more")
        err.print(f"{len(report.rejected)} record(s) rejected")


@app.command()
def ingest(
    ctx: typer.Context,
    lanes: Annotated[
        str, typer.Option("--lanes", help="Comma-separated lanes to run.")
    ] = "catalog",
    catalog: Annotated[Path | None, typer.Option(help="Catalog YAML (catalog lane).")] = None,
    manifests: Annotated[
        Path | None, typer.Option(help="Directory of Kubernetes manifests (infra lane, offline).")
    ] = None,
    repo: Annotated[
        list[Path] | None, typer.Option(help="Local Git repo (code/change lanes); repeatable.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Run lanes and write their records; exits 1 if any record was rejected."""
    settings = _state(ctx).settings()
    report = run_ingest(
        settings, lanes, catalog=catalog, manifests=manifests, repos=tuple(repo or ())
    )
    _print_report(report, as_json)
    if report.rejected:
        raise typer.Exit(1)


@graph_app.command("stats")
def graph_stats(
    ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False
) -> None:
    """Count nodes per label and edges per type."""
    from .dump import stats

    with open_store(_state(ctx).settings()) as store:
        data = stats(store)
    if as_json:
        sys.stdout.write(json.dumps(data) + "\n")
        return
    out.print(stats_table(data, store.graph_name))


def stats_table(data: dict[str, dict[str, int]], graph: str) -> Table:
    table = Table(title=f"graph {graph!r}")
    table.add_column("kind")
    table.add_column("name")
    table.add_column("count", justify="right")
    for kind in ("nodes", "edges"):
        for name, n in data[kind].items():
            table.add_row(kind[:-1], name, str(n))
    if not data["nodes"]:
        table.add_row("-", "(empty graph)", "0")
    return table


@graph_app.command("export")
def graph_export(ctx: typer.Context) -> None:
    """Print every node and edge as sorted JSONL (volatile timestamps left out)."""
    from .dump import export_lines

    with open_store(_state(ctx).settings()) as store:
        lines = export_lines(store)
    for line in lines:
        sys.stdout.write(line + "\n")


@schema_app.command("apply")
def schema_apply(ctx: typer.Context) -> None:
    """Create the schema's indexes (idempotent)."""
    from stackgraph.ingest import GraphIngestor

    settings = _state(ctx).settings()
    with open_store(settings) as store, GraphIngestor(store, who="schema") as writer:
        created = writer.apply_schema()
    out.print(f"created {len(created)} index(es)" + (": " + ", ".join(created) if created else ""))


@schema_app.command("show")
def schema_show(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Print labels with their natural keys, and edge types with their ends."""
    from stackgraph.schema import EDGES, LABELS

    if as_json:
        data = {
            "labels": {
                n: {"keys": list(s.keys), "required": list(s.required),
                    "enums": {k: list(v) for k, v in s.enums.items()}}
                for n, s in LABELS.items()
            },
            "edges": {
                n: {"from": list(s.sources), "to": list(s.targets), "keys": list(s.keys)}
                for n, s in EDGES.items()
            },
        }  # fmt: skip
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    labels = Table(title="labels")
    for col in ("label", "natural key", "required", "enums"):
        labels.add_column(col)
    for spec in LABELS.values():
        enums = "; ".join(f"{k}: {'|'.join(v)}" for k, v in spec.enums.items())
        labels.add_row(spec.name, ", ".join(spec.keys), ", ".join(spec.required), enums)
    edges = Table(title="edge types")
    for col in ("type", "from", "to"):
        edges.add_column(col)
    for espec in EDGES.values():
        edges.add_row(espec.name, ", ".join(espec.sources), ", ".join(espec.targets))
    out.print(labels)
    out.print(edges)


@db_app.command("start")
def db_start(ctx: typer.Context) -> None:
    """Start the embedded FalkorDB and leave it running (later commands reuse it)."""
    from .embedded import EmbeddedFalkorDB

    settings = _state(ctx).settings()
    server = EmbeddedFalkorDB(settings.data_dir, settings.embedded_port)
    endpoint = server.start()
    server.detach()
    out.print(f"FalkorDB serving {settings.data_dir} at {endpoint.url()}")


@db_app.command("stop")
def db_stop(ctx: typer.Context) -> None:
    """Stop the data dir's embedded FalkorDB (saving first)."""
    from .embedded import EmbeddedFalkorDB

    settings = _state(ctx).settings()
    stopped = EmbeddedFalkorDB(settings.data_dir).stop_running()
    out.print("stopped" if stopped else f"no FalkorDB running for {settings.data_dir}")


@db_app.command("status")
def db_status(ctx: typer.Context) -> None:
    """Say whether an embedded FalkorDB serves the data dir."""
    from .embedded import EmbeddedFalkorDB

    settings = _state(ctx).settings()
    endpoint = EmbeddedFalkorDB(settings.data_dir).status()
    if endpoint is None:
        out.print(f"not running ({settings.data_dir})")
        raise typer.Exit(1)
    out.print(f"running at {endpoint.url()} ({settings.data_dir})")


@app.command()
def demo(
    ctx: typer.Context,
    examples: Annotated[Path, typer.Option(help="Folder of the example platform.")] = REPO_ROOT
    / "examples",
) -> None:
    """Ingest the bundled example platform and show what the graph now knows."""
    from .demo import run_demo

    run_demo(_state(ctx).settings(), examples, out)


def main() -> None:
    """Entry point: StackGraph errors become one line on stderr and exit code 2."""
    try:
        app()
    except StackGraphError as exc:
        message = " ".join(str(exc).split())
        sys.stderr.write(f"error: {message}\n")
        sys.exit(2)
