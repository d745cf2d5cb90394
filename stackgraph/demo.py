"""`stackgraph demo`: the example platform, end to end, re-runnable on the same data dir.

The demo is a list of steps; each capability adds its own step (ingest a lane, run an
investigation, ...) in order, so the story grows without reshaping this module.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from .config import Settings
from .demo_infra import ingest_change, ingest_infra
from .errors import InputError
from .store import GraphStore


@dataclass
class DemoContext:
    settings: Settings
    examples: Path
    console: Console
    store: GraphStore
    results: dict[str, Any] = field(default_factory=dict)


def ingest_catalog(ctx: DemoContext) -> None:
    from .cli.app import report_table, run_ingest

    catalog = ctx.examples / "platform" / "catalog.yaml"
    report = run_ingest(ctx.settings, "catalog", catalog=catalog, store=ctx.store)
    ctx.console.print(report_table(report, "ingest: catalog"))
    for problem in report.rejected:
        ctx.console.print(f"[red]rejected[/red] {escape(str(problem))}")


def show_stats(ctx: DemoContext) -> None:
    from .cli.core import stats_table
    from .dump import stats

    ctx.console.print(stats_table(stats(ctx.store), ctx.store.graph_name))


def serve_and_investigate(ctx: DemoContext) -> None:
    from .api.demo_step import serve_and_investigate as step

    step(ctx)


def ingest_code(ctx: DemoContext) -> None:
    from .code_demo import demo_code

    demo_code(ctx)


def ingest_telemetry(ctx: DemoContext) -> None:
    """Tempo's service graph from the example span files (OTLP JSON), as `--spans` does."""
    from .cli.app import report_table, run_ingest

    spans = ctx.examples / "platform" / "traces"
    report = run_ingest(ctx.settings, "telemetry", options={"spans": spans}, store=ctx.store)
    ctx.console.print(report_table(report, f"ingest: telemetry (spans in {spans.name}/)"))
    for problem in report.rejected:
        ctx.console.print(f"[red]rejected[/red] {escape(str(problem))}")


STEPS: list[tuple[str, Callable[[DemoContext], None]]] = [
    ("catalog", ingest_catalog),
    ("infra", ingest_infra),
    ("code", ingest_code),
    ("change", ingest_change),
    ("telemetry", ingest_telemetry),
    ("stats", show_stats),
    ("investigate", lambda ctx: _investigate_step(ctx)),
    ("alert → incident (API, no LLM)", serve_and_investigate),
]


def _investigate_step(ctx: DemoContext) -> None:
    from .cli.investigate import demo_step

    demo_step(ctx)


def run_demo(settings: Settings, examples: Path, console: Console) -> None:
    from threadpoolctl import threadpool_limits

    if not (examples / "platform" / "catalog.yaml").is_file():
        raise InputError(f"example platform not found in {examples} (pass --examples DIR)")
    console.rule("[bold]StackGraph demo")
    console.print(f"data dir: {settings.data_dir}   graph: {settings.graph!r}")
    started = time.monotonic()
    # One BLAS thread for the offline embedder: on a busy 2-core machine OpenBLAS's spinning
    # worker threads made the code step's 40 embeddings take ~25 s instead of ~4 s.
    with GraphStore.open(settings) as store, threadpool_limits(limits=1, user_api="blas"):
        console.print(f"store: {store.where}")
        ctx = DemoContext(settings, examples, console, store)
        for name, step in STEPS:
            console.rule(name, style="dim")
            t0 = time.monotonic()
            step(ctx)
            console.print(f"[dim]({name}: {time.monotonic() - t0:.1f} s)[/dim]")
    console.rule(f"[bold]demo done in {time.monotonic() - started:.1f} s", style="dim")
    from .api.demo_step import show_ui_url

    show_ui_url(ctx)  # last, so the demo ends with the URL
