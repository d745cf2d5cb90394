"""`stackgraph demo`: the example platform, end to end, re-runnable on the same data dir."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from .config import Settings
from .errors import InputError
from .store import GraphStore


def run_demo(settings: Settings, examples: Path, console: Console) -> None:
    from .cli import report_table, run_ingest, stats_table
    from .dump import stats

    catalog = examples / "platform" / "catalog.yaml"
    if not catalog.is_file():
        raise InputError(f"example platform not found at {catalog} (pass --examples DIR)")
    console.rule("[bold]StackGraph demo")
    console.print(f"data dir: {settings.data_dir}   graph: {settings.graph!r}")
    with GraphStore.open(settings) as store:
        console.print(f"store: {store.where}")
        report = run_ingest(settings, "catalog", catalog=catalog, store=store)
        console.print(report_table(report, "ingest: catalog"))
        for problem in report.rejected:
            console.print(f"[red]rejected[/red] {problem}")
        console.print(stats_table(stats(store), store.graph_name))
