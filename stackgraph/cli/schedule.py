"""`stackgraph schedule`: run the ingest lanes on their intervals in the foreground.

The jobs and intervals come from settings (`schedule_*`, env `STACKGRAPH_SCHEDULE_*`);
see stackgraph/scheduler.py. `serve --schedule` runs the same scheduler beside the API.
"""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType
from typing import Annotated

import typer
from rich.table import Table

from .app import app, out, state_of

schedule_app = typer.Typer(
    help="Run the ingest lanes on intervals in one process.", no_args_is_help=True
)
app.add_typer(schedule_app, name="schedule")

# Exit codes of `schedule run --once`, worst wins: a held lease is EX_TEMPFAIL (75) like
# `ingest`, rejected records 1 like `ingest`, anything else 2.
_EXIT = {"ok": 0, "skipped": 75, "rejected": 1, "failed": 2}
_RANK = {"ok": 0, "skipped": 1, "rejected": 2, "failed": 3}


def _logging() -> None:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("apscheduler").setLevel(logging.WARNING)


@schedule_app.command("show")
def schedule_show(ctx: typer.Context) -> None:
    """List the jobs the scheduler would run: name, lanes, interval."""
    from stackgraph.scheduler import default_jobs

    table = Table(title="scheduled jobs")
    for col in ("job", "lanes", "every (s)"):
        table.add_column(col)
    for job in default_jobs(state_of(ctx).settings()):
        table.add_row(job.name, job.lanes, f"{job.interval_s:g}")
    out.print(table)


@schedule_app.command("run")
def schedule_run(
    ctx: typer.Context,
    once: Annotated[
        bool, typer.Option("--once", help="Run every job once, in order, then exit.")
    ] = False,
) -> None:
    """Run the lanes on their intervals until SIGTERM/SIGINT (a held lease skips a run)."""
    from stackgraph.scheduler import build_scheduler, default_jobs, run_job

    _logging()
    settings = state_of(ctx).settings()
    jobs = default_jobs(settings)
    if not jobs:
        raise typer.BadParameter("no job to schedule: no configured lane is installed")
    if once:
        worst = "ok"
        for job in jobs:
            result = run_job(settings, job)
            out.print(f"{job.name} ({job.lanes}): {result.status} {result.detail}".rstrip())
            worst = max(worst, result.status, key=_RANK.__getitem__)
        raise typer.Exit(_EXIT[worst])
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    scheduler = build_scheduler(settings, jobs)
    scheduler.start()
    for job in jobs:
        logging.getLogger("stackgraph.scheduler").info(
            "schedule: %s every %gs: %s", job.name, job.interval_s, job.lanes
        )
    stop.wait()
    scheduler.shutdown(wait=True)
