"""Run the ingest lanes on intervals inside one process (`stackgraph schedule run`,
`stackgraph serve --schedule`), for users who run one process instead of CronJobs.

Every run goes through the single writer, so it takes the writer lease. A run that finds
the lease held (a CronJob, another replica, a manual `stackgraph ingest`) is skipped and
logged; the scheduler keeps going. Jobs share one worker thread: two jobs of this process
would only contend for the same lease, so they run one after the other instead.

    scheduler = build_scheduler(settings, default_jobs(settings))
    scheduler.start()   # BackgroundScheduler: returns at once; .shutdown() to stop
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger

from stackgraph.config import Settings
from stackgraph.errors import ConfigError, LeaseHeldError, StackGraphError
from stackgraph.ingest import LANES, IngestReport, resolve, run_lanes
from stackgraph.store import GraphStore

__all__ = [
    "Job",
    "JobOutcome",
    "build_scheduler",
    "default_jobs",
    "run_job",
]

log = logging.getLogger("stackgraph.scheduler")

Status = Literal["ok", "skipped", "rejected", "failed"]


@dataclass(frozen=True)
class Job:
    """A named set of lanes run every `interval_s` seconds, with the inputs they read."""

    name: str
    lanes: str
    interval_s: float
    catalog: Path | None = None
    manifests: Path | None = None
    repos: tuple[Path, ...] = ()
    kind: str = "lanes"
    """`lanes`, or `evolve`: the knowledge evolution (`stackgraph evolve`), not a lane."""

    def __post_init__(self) -> None:
        if not self.name:
            raise ConfigError("a scheduled job needs a name")
        if self.interval_s <= 0:
            raise ConfigError(f"job {self.name!r}: interval_s must be > 0, got {self.interval_s}")


@dataclass(frozen=True)
class JobOutcome:
    """What one run of a job did. `skipped`: the writer lease was held by someone else."""

    job: str
    status: Status
    detail: str = ""
    report: IngestReport | None = field(default=None, compare=False)
    started_at: float = 0.0
    duration_s: float = 0.0
    evolution: dict[str, Any] | None = field(default=None, compare=False)
    """An evolve job's report (`stackgraph.eval.evolution.evolve`)."""


OutcomeHook = Callable[[JobOutcome], None]


def _cluster_configured() -> bool:
    """In a pod, or a kubeconfig where the kubernetes client looks for one."""
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return True
    paths = os.environ.get("KUBECONFIG", str(Path.home() / ".kube" / "config"))
    return any(Path(p).is_file() for p in paths.split(os.pathsep) if p)


def _auto_lanes(wanted: Sequence[tuple[str, bool]]) -> str:
    """Lanes that apply and are installed, in order."""
    return ",".join(name for name, applies in wanted if applies and name in LANES)


def default_jobs(settings: Settings) -> list[Job]:
    """The three standard jobs from settings: static (hourly), change, telemetry.

    Lanes left unset (None) are chosen from what is configured and installed; a job left
    with no lane, or set to "", is not scheduled. Lanes set explicitly are checked: an
    unknown one is a ConfigError.
    """
    repos = tuple(settings.schedule_repos)
    cluster = _cluster_configured()
    specs = (
        (
            "static",
            settings.schedule_static_lanes,
            _auto_lanes(
                [
                    ("catalog", settings.catalog is not None),
                    ("infra", bool(settings.schedule_manifests) or cluster),
                    ("code", bool(repos)),
                ]
            ),
            settings.schedule_static_interval_s,
        ),
        (
            "change",
            settings.schedule_change_lanes,
            _auto_lanes([("change", bool(repos) or cluster)]),
            settings.schedule_change_interval_s,
        ),
        (
            "telemetry",
            settings.schedule_telemetry_lanes,
            _auto_lanes([("telemetry", bool(settings.prometheus_url or settings.telemetry_spans))]),
            settings.schedule_telemetry_interval_s,
        ),
    )
    jobs: list[Job] = []
    for name, explicit, auto, interval in specs:
        lanes = auto if explicit is None else explicit.strip()
        if lanes and explicit is not None:
            try:
                resolve(explicit)
            except StackGraphError as exc:
                raise ConfigError(f"setting schedule_{name}_lanes: {exc}") from exc
        if not lanes:
            log.info("schedule: job %s has no installed lane to run; not scheduled", name)
            continue
        jobs.append(
            Job(name, lanes, interval, settings.catalog, settings.schedule_manifests, repos)
        )
    if settings.schedule_evolve_interval_s is not None:
        jobs.append(Job("evolve", "evolve", settings.schedule_evolve_interval_s, kind="evolve"))
    return jobs


def run_job(settings: Settings, job: Job, store: GraphStore | None = None) -> JobOutcome:
    """Run one job's lanes through the single writer; never raises.

    A held lease gives `skipped`; rejected records give `rejected` (the valid ones are
    written); any other error gives `failed` with the message, logged.
    """
    started = time.time()
    t0 = time.monotonic()

    def outcome(status: Status, detail: str, report: IngestReport | None = None) -> JobOutcome:
        return JobOutcome(job.name, status, detail, report, started, time.monotonic() - t0)

    try:
        if job.kind == "evolve":
            evolution = _evolve(settings, store)
            detail = f"{evolution['proposals']} proposal(s), {evolution['admitted']} admitted"
            log.info("schedule: job %s ok: %s", job.name, detail)
            return replace(outcome("ok", detail), evolution=evolution)
        report, failures = _ingest(settings, job, store)
    except LeaseHeldError as exc:
        log.warning("schedule: job %s skipped: %s", job.name, exc)
        return outcome("skipped", str(exc))
    except StackGraphError as exc:
        log.error("schedule: job %s failed: %s", job.name, exc)
        return outcome("failed", str(exc))
    except Exception as exc:  # a bug in a lane must not stop the other jobs
        log.exception("schedule: job %s crashed", job.name)
        return outcome("failed", f"{type(exc).__name__}: {exc}")
    if failures:
        detail = "; ".join(str(exc) for exc in failures)
        log.error("schedule: job %s failed: %s", job.name, detail)
        return outcome("failed", detail, report)
    if report.rejected:
        log.warning(
            "schedule: job %s wrote with %d rejected record(s); first: %s",
            job.name,
            len(report.rejected),
            report.rejected[0],
        )
        return outcome("rejected", f"{len(report.rejected)} record(s) rejected", report)
    log.info("schedule: job %s ok (lanes %s)", job.name, job.lanes)
    return outcome("ok", "", report)


def _evolve(settings: Settings, store: GraphStore | None) -> dict[str, Any]:
    from stackgraph.eval.evolution import evolve  # the gates replay with the read path

    if store is None:
        with GraphStore.open(settings) as opened:
            return evolve(opened, settings)
    return evolve(store, settings)


def _ingest(
    settings: Settings, job: Job, store: GraphStore | None
) -> tuple[IngestReport, list[StackGraphError]]:
    """The one way lanes run (`run_lanes`): the lease is taken before any lane collects,
    so a skipped run has touched nothing, the code index included."""

    def run(st: GraphStore) -> tuple[IngestReport, list[StackGraphError]]:
        return run_lanes(st, settings, job.lanes, catalog=job.catalog, manifests=job.manifests,
                         repos=job.repos, who="schedule")  # fmt: skip

    if store is None:
        with GraphStore.open(settings) as opened:
            return run(opened)
    return run(store)


def build_scheduler(
    settings: Settings,
    jobs: Sequence[Job],
    *,
    on_outcome: OutcomeHook | None = None,
    store: GraphStore | None = None,
    run_now: bool = True,
) -> BackgroundScheduler:
    """A BackgroundScheduler (not started) running each job every `interval_s`.

    `run_now` starts each job once right away instead of after its first interval.
    `on_outcome` receives every JobOutcome (metrics, tests). `store`, when given, is shared
    by every run (it must outlive the scheduler); otherwise each run opens its own.
    """
    names = [j.name for j in jobs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"scheduled job name(s) used twice: {', '.join(dupes)}")
    for job in jobs:
        if job.kind == "evolve":
            continue
        try:
            resolve(job.lanes)
        except StackGraphError as exc:
            raise ConfigError(f"scheduled job {job.name!r}: {exc}") from exc
    scheduler = BackgroundScheduler(
        executors={"default": ThreadPoolExecutor(max_workers=1)},
        job_defaults={"coalesce": True, "max_instances": 1},
        timezone="UTC",
    )
    lock = threading.Lock()  # the hook may be called from the worker thread only, but be safe

    def fire(job: Job) -> None:
        result = run_job(settings, job, store)
        if on_outcome is not None:
            with lock:
                on_outcome(result)

    for job in jobs:
        trigger = IntervalTrigger(seconds=job.interval_s, timezone="UTC")
        scheduler.add_job(
            fire,
            trigger,
            args=[job],
            id=job.name,
            name=f"{job.name}: {job.lanes}",
            # a run delayed behind a long job still runs once when the worker is free
            misfire_grace_time=max(1, int(job.interval_s)),
            **({"next_run_time": datetime.now(UTC)} if run_now else {}),
        )
    return scheduler
