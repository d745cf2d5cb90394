"""The durable job queue: a Redis stream in the FalkorDB server, read through one consumer
group by every worker of every replica.

    incidents.lua ─XADD─▶ stream ─XREADGROUP─▶ worker ─▶ XACK + XDEL (after write-back)
                                     ▲
                     XAUTOCLAIM ─────┘  a job whose worker stopped renewing it
                                        (killed, lost its store) for `claim_idle_s`

Delivery is at least once: a job is acknowledged only after its work is stored, and a
worker renews the jobs it holds (`keep`), so only a dead or cut-off worker's jobs move.
Jobs are appended by the incident records' script (`incident_store.py`), atomically with
the record they belong to; every other stream command is here.
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass
from typing import Any

import redis

from stackgraph.store import GraphStore

GROUP = "workers"

_KEEP = """
local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1)
if p[1] and p[1][2] == ARGV[2] then
  redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3], 'JUSTID')
  return 1
end
return 0
"""
"""Renew a job only while this consumer still holds it (XCLAIM alone would take it back
from a worker that claimed it in the meantime)."""


def stream_key(graph: str) -> str:
    return f"stackgraph:{graph}:jobs"


def consumer_name(index: int) -> str:
    """Unique per process and worker thread, so a restarted process never resumes a dead
    one's pending jobs by name: they are claimed after `claim_idle_s` like any other."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}:{index}"


@dataclass(frozen=True)
class Job:
    """One stream entry: investigate an incident, or write it back again."""

    id: str
    kind: str
    """investigate | write"""
    incident: str


def _job(entry: Any) -> Job | None:
    entry_id, fields = entry
    if not fields:  # deleted while pending: nothing to do
        return None
    return Job(str(entry_id), str(fields.get("kind", "")), str(fields.get("incident", "")))


class JobQueue:
    """The stream of one graph. Usage (a worker)::

    queue.ensure_group()
    job = queue.next("host:pid:0", block_ms=1000)
    if job: ...; queue.done(job)
    """

    def __init__(self, store: GraphStore, *, claim_idle_s: float = 60.0) -> None:
        self.store = store
        self.conn: redis.Redis = store.conn
        self.key = stream_key(store.graph_name)
        self.claim_idle_ms = max(1, int(claim_idle_s * 1000))
        self._keep = self.conn.register_script(_KEEP)

    def ensure_group(self) -> None:
        with self.store.translate("creating the job stream"):
            try:
                self.conn.xgroup_create(self.key, GROUP, id="0", mkstream=True)
            except redis.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise

    def backlog(self) -> int:
        """Jobs not yet done: waiting or being worked on (done ones are deleted)."""
        with self.store.translate("reading the job backlog"):
            return int(self.conn.xlen(self.key))

    def next(self, consumer: str, block_ms: int = 1000) -> Job | None:
        """A job abandoned by another worker first, else a new one (waiting up to
        `block_ms`); None when there is none."""
        with self.store.translate("reading the job stream"):
            try:
                return self._next(consumer, block_ms)
            except redis.ResponseError as exc:
                if "NOGROUP" not in str(exc):
                    raise
            self.ensure_group()  # the stream was removed (a wiped server): start over
            return None

    def _next(self, consumer: str, block_ms: int) -> Job | None:
        claimed = self.conn.xautoclaim(self.key, GROUP, consumer, self.claim_idle_ms,
                                       start_id="0-0", count=1)  # fmt: skip
        for entry in claimed[1]:
            job = _job(entry)
            if job is not None:
                return job
        got: Any = self.conn.xreadgroup(GROUP, consumer, {self.key: ">"}, count=1, block=block_ms)
        for _stream, entries in got or []:
            for entry in entries:
                job = _job(entry)
                if job is not None:
                    return job
        return None

    def keep(self, consumer: str, job: Job) -> bool:
        """Renew a held job; False when another worker has claimed it."""
        with self.store.translate("renewing a job"):
            return bool(self._keep(keys=[self.key], args=[GROUP, consumer, job.id]))

    def done(self, job: Job) -> None:
        with self.store.translate("acknowledging a job"):
            pipe = self.conn.pipeline(transaction=True)
            pipe.xack(self.key, GROUP, job.id)
            pipe.xdel(self.key, job.id)
            pipe.execute()

    def forget_idle_consumers(self, idle_s: float = 3600.0) -> int:
        """Drop consumers (exited processes) that hold nothing and were idle for long."""
        with self.store.translate("listing consumers"):
            try:
                consumers = self.conn.xinfo_consumers(self.key, GROUP)
            except redis.ResponseError:
                return 0
            idle_ms = idle_s * 1000
            gone = [
                str(c["name"])
                for c in consumers
                if int(c.get("pending", 0)) == 0 and int(c.get("idle", 0)) > idle_ms
            ]
            for name in gone:
                self.conn.xgroup_delconsumer(self.key, GROUP, name)
        return len(gone)
