"""The worker pool: threads that each read the job stream as one consumer of its group.

A job is acknowledged after its handler returns. A handler that meets a transient error
(the store unreachable, the writer lease held past its wait) leaves the job pending: the
keeper stops renewing it, and after `claim_idle_s` any worker of any replica claims it
again. A job that fails for any other reason is logged and acknowledged, so one bad
incident never blocks the stream (its record says what failed). Stopping (SIGTERM) lets
the jobs at hand finish within the timeout and leaves every other one in the stream.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable

from stackgraph.errors import LeaseHeldError, StackGraphError, StoreUnavailable

from .job_queue import Job, JobQueue, consumer_name

log = logging.getLogger(__name__)

TRANSIENT = (StoreUnavailable, LeaseHeldError)
"""Errors after which a job is retried (claimed again), not failed."""

Handler = Callable[[Job, str], None]
"""(job, consumer name) -> None; raises a TRANSIENT error to have the job retried."""


class WorkerPool:
    def __init__(
        self,
        queue: JobQueue,
        handle: Handler,
        *,
        workers: int = 2,
        claim_idle_s: float = 60.0,
        maintain: Callable[[], None] | None = None,
        maintain_every_s: float = 60.0,
        block_ms: int = 1000,
    ) -> None:
        self.queue = queue
        self.handle = handle
        self.n_workers = workers
        self.keep_every_s = max(0.1, claim_idle_s / 3)
        self.maintain = maintain
        self.maintain_every_s = maintain_every_s
        self.block_ms = block_ms
        self._stop = threading.Event()
        self._held: dict[str, Job] = {}
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        self._stop.clear()
        for i in range(self.n_workers):
            name = consumer_name(i)
            self._spawn(f"sg-worker-{i}", functools.partial(self._work, name))
        self._spawn("sg-job-keeper", self._keep)

    def _spawn(self, name: str, target: Callable[[], None]) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self, timeout: float = 10.0) -> None:
        """Finish the jobs at hand (up to `timeout`); the rest stays in the stream."""
        self._stop.set()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        self._threads.clear()

    @property
    def alive(self) -> bool:
        return bool(self._threads) and all(t.is_alive() for t in self._threads)

    def _work(self, consumer: str) -> None:
        backoff = 0.5
        while not self._stop.is_set():
            try:
                job = self.queue.next(consumer, self.block_ms)
            except StackGraphError as exc:
                log.warning("job stream unavailable (retrying in %.1f s): %s", backoff, exc)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            backoff = 0.5
            if job is not None:
                self._run(consumer, job)

    def _run(self, consumer: str, job: Job) -> None:
        self._held[consumer] = job
        try:
            self.handle(job, consumer)
        except TRANSIENT as exc:
            log.warning("%s job of incident %s left for a retry: %s", job.kind, job.incident, exc)
            self._held.pop(consumer, None)
            self._stop.wait(1.0)
            return
        except Exception:  # a worker never dies on one job, and one job never blocks the rest
            log.exception("%s job of incident %s failed", job.kind, job.incident)
        finally:
            self._held.pop(consumer, None)
        try:
            self.queue.done(job)
        except StackGraphError as exc:  # claimed again later; handlers are idempotent
            log.warning("job %s not acknowledged: %s", job.id, exc)

    def _keep(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(self.keep_every_s):
            for consumer, job in list(self._held.items()):
                try:
                    if not self.queue.keep(consumer, job):
                        log.warning("job %s of incident %s was claimed by another worker",
                                    job.id, job.incident)  # fmt: skip
                except StackGraphError as exc:
                    log.warning("cannot renew job %s: %s", job.id, exc)
            if self.maintain is not None and time.monotonic() - last >= self.maintain_every_s:
                last = time.monotonic()
                try:
                    self.maintain()
                except StackGraphError as exc:
                    log.warning("incident maintenance failed: %s", exc)
