"""Demo step: the example platform's Kubernetes manifests (infra) and Flux status (change)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

if TYPE_CHECKING:
    from .demo import DemoContext


def ingest_infra(ctx: DemoContext) -> None:
    from .cli.app import report_table, run_ingest

    manifests = ctx.examples / "platform" / "manifests"
    if not manifests.is_dir():
        ctx.console.print(f"[yellow]no manifests in {manifests}; infra step skipped[/yellow]")
        return
    report = run_ingest(ctx.settings, "infra,change", manifests=manifests, store=ctx.store)
    ctx.console.print(report_table(report, "ingest: infra + change (manifests, Flux status)"))
    for problem in report.rejected:
        ctx.console.print(f"[red]rejected[/red] {escape(str(problem))}")
