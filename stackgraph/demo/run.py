"""`stackgraph demo`: the example platform, end to end, re-runnable on the same data dir.

The demo is a list of steps; each capability adds its own step (ingest a lane, run an
investigation, ...) in order, so the story grows without reshaping this module. Each step
calls the product as a user's script would: lanes through `run_ingest`, plans through
`Planner`, incidents through the HTTP API.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from threadpoolctl import threadpool_limits

from stackgraph.cli.app import report_table, run_ingest
from stackgraph.cli.core import stats_table
from stackgraph.cli.investigate import print_plan
from stackgraph.config import Settings
from stackgraph.dump import stats
from stackgraph.errors import InputError
from stackgraph.rca import Planner
from stackgraph.rca.alertmanager import alerts_from_webhook
from stackgraph.rca.clock import iso
from stackgraph.store import GraphStore

from .api_step import serve_and_investigate, show_ui_url
from .code import ingest_code
from .context import DemoContext, print_rejected
from .infra import ingest_change, ingest_infra


def ingest_catalog(ctx: DemoContext) -> None:
    catalog = ctx.examples / "platform" / "catalog.yaml"
    report = run_ingest(ctx.settings, "catalog", catalog=catalog, store=ctx.store)
    ctx.console.print(report_table(report, "ingest: catalog"))
    print_rejected(ctx, report)


def ingest_telemetry(ctx: DemoContext) -> None:
    """Tempo's service graph from the example span files (OTLP JSON), as `--spans` does."""
    spans = ctx.examples / "platform" / "traces"
    report = run_ingest(ctx.settings, "telemetry", options={"spans": spans}, store=ctx.store)
    ctx.console.print(report_table(report, f"ingest: telemetry (spans in {spans.name}/)"))
    print_rejected(ctx, report)


def show_stats(ctx: DemoContext) -> None:
    ctx.console.print(stats_table(stats(ctx.store), ctx.store.graph_name))


def investigate_alert(ctx: DemoContext) -> None:
    """Fire the example alert on checkout and print the ranked plan.

    Everything it ranks on came through the lanes in the steps before: Tempo edges from
    the span files (telemetry), Deploys from the Flux status and Changes from the demo
    repo's history (change). Nothing is written here.
    """
    alert_file = ctx.alert_file
    alert = alerts_from_webhook(json.loads(alert_file.read_text()), str(alert_file))[0]
    starts = alert.starts_at or 0.0
    ctx.console.print(
        f"alert {alert.labels.get('alertname')} on {alert.labels.get('service')} "
        f"(pod {alert.labels.get('pod')}) from {alert_file.name}, firing since {iso(starts)}"
    )
    plan = Planner.from_settings(ctx.settings)(ctx.store, alert, at=starts + 300.0, hops=3)
    ctx.results["plan"] = plan
    print_plan(plan, ctx.console, top=8, evidence_for=3)


STEPS: list[tuple[str, Callable[[DemoContext], None]]] = [
    ("catalog", ingest_catalog),
    ("infra", ingest_infra),
    ("code", ingest_code),
    ("change", ingest_change),
    ("telemetry", ingest_telemetry),
    ("stats", show_stats),
    ("investigate", investigate_alert),
    ("alert → incident (API, no LLM)", serve_and_investigate),
]


def with_example_logs(settings: Settings, examples: Path) -> Settings:
    """The example platform's log files as the log source, set as a user sets `logs_path`:
    the read path and the agent's `loki_query` read them. Logs the user configured (Loki
    or files) are kept; an examples folder without logs leaves none."""
    folder = examples / "platform" / "logs"
    if settings.loki_url or settings.logs_path is not None or not folder.is_dir():
        return settings
    return settings.model_copy(update={"logs_path": folder})


def run_demo(settings: Settings, examples: Path, console: Console) -> None:
    if not (examples / "platform" / "catalog.yaml").is_file():
        raise InputError(f"example platform not found in {examples} (pass --examples DIR)")
    settings = with_example_logs(settings, examples)
    console.rule("[bold]StackGraph demo")
    console.print(f"data dir: {settings.data_dir}   graph: {settings.graph!r}")
    console.print(f"logs: {settings.loki_url or settings.logs_path or 'none'}")
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
    show_ui_url(ctx)  # last, so the demo ends with the URL
