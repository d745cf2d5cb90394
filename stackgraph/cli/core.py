"""Core commands: ingest, graph, schema, db."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from .app import (
    app,
    db_app,
    graph_app,
    open_store,
    out,
    print_report,
    run_ingest,
    schema_app,
    state_of,
)


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
    spans: Annotated[
        Path | None,
        typer.Option(help="Span file or folder: OTLP/Jaeger JSON, CSV (telemetry lane, offline)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Run lanes and write their records; exits 1 if any record was rejected."""
    settings = state_of(ctx).settings()
    options = {"spans": spans} if spans is not None else {}
    report = run_ingest(
        settings,
        lanes,
        catalog=catalog,
        manifests=manifests,
        repos=tuple(repo or ()),
        options=options,
    )
    print_report(report, as_json)
    if report.rejected:
        raise typer.Exit(1)


@graph_app.command("stats")
def graph_stats(
    ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False
) -> None:
    """Count nodes per label and edges per type."""
    from stackgraph.dump import stats

    with open_store(state_of(ctx).settings()) as store:
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
    from stackgraph.dump import export_lines

    with open_store(state_of(ctx).settings()) as store:
        lines = export_lines(store)
    for line in lines:
        sys.stdout.write(line + "\n")


@schema_app.command("apply")
def schema_apply(ctx: typer.Context) -> None:
    """Create the schema's indexes (idempotent)."""
    from stackgraph.ingest import GraphIngestor

    settings = state_of(ctx).settings()
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
    from stackgraph.embedded import EmbeddedFalkorDB

    settings = state_of(ctx).settings()
    server = EmbeddedFalkorDB(settings.data_dir, settings.embedded_port)
    endpoint = server.start()
    server.detach()
    out.print(f"FalkorDB serving {settings.data_dir} at {endpoint.url()}")


@db_app.command("stop")
def db_stop(ctx: typer.Context) -> None:
    """Stop the data dir's embedded FalkorDB (saving first)."""
    from stackgraph.embedded import EmbeddedFalkorDB

    settings = state_of(ctx).settings()
    stopped = EmbeddedFalkorDB(settings.data_dir).stop_running()
    out.print("stopped" if stopped else f"no FalkorDB running for {settings.data_dir}")


@db_app.command("status")
def db_status(ctx: typer.Context) -> None:
    """Say whether an embedded FalkorDB serves the data dir."""
    from stackgraph.embedded import EmbeddedFalkorDB

    settings = state_of(ctx).settings()
    endpoint = EmbeddedFalkorDB(settings.data_dir).status()
    if endpoint is None:
        out.print(f"not running ({settings.data_dir})")
        raise typer.Exit(1)
    out.print(f"running at {endpoint.url()} ({settings.data_dir})")
