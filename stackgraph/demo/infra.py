"""Demo steps: the example platform's Kubernetes manifests (infra), then what changed (the
change lane on the demo repo's PR history plus the Flux HelmRelease status)."""

from __future__ import annotations

from pathlib import Path

import git
from rich.table import Table

from stackgraph import cypher
from stackgraph.cli.app import report_table, run_ingest
from stackgraph.rca.clock import iso

from .code import pr_merges
from .context import DemoContext, print_rejected


def _subject(repo: Path, rev: str) -> str:
    """A commit's subject when it is no pull request (e.g. the initial import)."""
    try:
        with git.Repo(repo) as r:
            return str(r.commit(rev).summary) if rev else "-"
    except (ValueError, git.BadName, git.GitCommandError):
        return f"{rev} (not in {repo.name})"


def ingest_infra(ctx: DemoContext) -> None:
    manifests = ctx.examples / "platform" / "manifests"
    if not manifests.is_dir():
        ctx.console.print(f"[yellow]no manifests in {manifests}; infra step skipped[/yellow]")
        return
    report = run_ingest(ctx.settings, "infra", manifests=manifests, store=ctx.store)
    ctx.console.print(report_table(report, "ingest: infra (manifests)"))
    print_rejected(ctx, report)


def ingest_change(ctx: DemoContext) -> None:
    """Commits since the last run (the repo's watermark) and Flux rollouts, in one lane run,
    so a rollout whose chart version names a commit (`1.9.2+<sha>`) links to its Change."""
    repo = ctx.repo
    manifests = ctx.examples / "platform" / "manifests"
    report = run_ingest(
        ctx.settings, "change", repos=(repo,), manifests=manifests if manifests.is_dir() else None,
        store=ctx.store,
    )  # fmt: skip
    ctx.console.print(report_table(report, "ingest: change (Git history, Flux status)"))
    print_rejected(ctx, report)
    by_sha = {sha: (n, at) for n, (sha, at) in pr_merges(repo).items()}
    services = [
        str(r["name"])
        for r in ctx.store.read(cypher.load("lane_service_names"))
        if r.get("label") == "Service"
    ]
    rows = ctx.store.read(cypher.load("latest_deploys"), {"names": services, "limit": 5})
    table = Table(title="latest rollouts (Flux) and the pull requests they carry")
    for col in ("service", "deployed", "chart", "revision", "pull request / commit"):
        table.add_column(col)
    for row in rows:
        p = row["props"] or {}
        rev = str(p.get("revision") or "")
        pr = next(((n, at) for sha, (n, at) in by_sha.items() if rev and sha.startswith(rev)), None)
        merged = f"#{pr[0]}, merged {iso(pr[1])}" if pr else _subject(repo, rev)
        table.add_row(str(row["service"]), iso(p.get("deployed_at")),
                      str(p.get("chart_version") or "-"), rev[:12] or "-", merged)  # fmt: skip
    ctx.console.print(table)
