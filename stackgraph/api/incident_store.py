"""Incident records in the Redis that FalkorDB already is, so every replica and a restarted
process answer the same (`GET /incidents`, feedback) and nothing accepted lives only in a
process.

    webhook ─▶ intake() ─ one script ─▶ records (alerts joined or started)
                                       └▶ job stream: one `investigate` job per new incident

Every change that must be atomic (intake, grouping, finishing) is one call of
`lua/incidents.lua`; plain reads and the retention sweep are here. Records older than
`retention_s` (by arrival) leave Redis once finished; the graph keeps the incident.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from stackgraph.errors import StackGraphError
from stackgraph.rca.model import Alert, Plan
from stackgraph.rca.outcome import IncidentOutcome, symptom_service
from stackgraph.store import GraphStore

from .correlation import CorrelationKey
from .job_queue import stream_key
from .outcome_codec import alert_doc, alert_from, dumps, run_doc, run_from

FINISHED = ("done", "failed")

_SCRIPT = resources.files("stackgraph.api").joinpath("lua/incidents.lua").read_text("utf-8")


class QueueFull(StackGraphError):
    """No room for another investigation; the sender should retry later."""


class UnknownIncident(StackGraphError):
    pass


@dataclass(frozen=True)
class Received:
    started: list[str]
    joined: list[str]
    closed: list[str]


@dataclass
class Incident:
    """What the API shows about one incident: the outcome plus its processing state."""

    outcome: IncidentOutcome
    state: str = "queued"
    """queued | investigating | done | failed"""
    error: str | None = None
    writeback: dict[str, Any] = field(default_factory=dict)
    alert_count: int = 1
    """Distinct alerts in the incident (the opening one included)."""
    correlated: list[dict[str, Any]] = field(default_factory=list)
    """Incidents that joined this one after planning, with the reason."""
    investigations: int = 0
    investigated_by: str | None = None
    rev: int = 0
    """Bumped by every change the graph has not seen yet (alerts joining, resolution)."""
    adhoc: bool = False
    alerts: list[Alert] = field(default_factory=list)
    """Every alert of the incident as it stands (resolved or firing), the opening one
    first; loaded by `get`/`load`, not by `page`."""

    @property
    def fingerprint(self) -> str:
        return self.outcome.fingerprint


def _json(value: str | None, default: Any) -> Any:
    return json.loads(value) if value else default


def _incident(h: Mapping[str, str], alerts: Mapping[str, str] | None, count: int) -> Incident:
    alert = alert_from(json.loads(h["alert"]))
    every = [alert_from(json.loads(doc)) for _fp, doc in sorted((alerts or {}).items())]
    every.sort(key=lambda a: a.fingerprint != alert.fingerprint)
    joined = every[1:] if every and every[0].fingerprint == alert.fingerprint else every
    memory = _json(h.get("memory"), None)
    outcome = IncidentOutcome(
        fingerprint=h["id"], alert=alert, symptom=h["symptom"], opened_at=float(h["opened_at"]),
        plan=Plan.from_dict(json.loads(h["plan"])) if h.get("plan") else None,
        run=run_from(json.loads(h["run"])) if h.get("run") else None,
        status=h.get("status", "open"), shadow=h.get("shadow") == "1",
        feedback=h.get("feedback", "pending"),
        confirmed_root_cause=h.get("confirmed_root_cause") or None,
        resolved_at=float(h["resolved_at"]) if h.get("resolved_at") else None,
        alerts_seen=int(h.get("alerts_seen", 1)),
        extra={"memory": memory} if memory is not None else {}, joined=joined,
    )  # fmt: skip
    return Incident(
        outcome, state=h.get("state", "queued"), error=h.get("error") or None,
        writeback=_json(h.get("writeback"), {}), alert_count=count,
        correlated=_json(h.get("correlated"), []), investigations=int(h.get("investigations", 0)),
        investigated_by=h.get("investigated_by") or None, rev=int(h.get("rev", 0)),
        adhoc=h.get("adhoc") == "1", alerts=every,
    )  # fmt: skip


def outcome_fields(outcome: IncidentOutcome) -> dict[str, str]:
    """What an investigation adds to its record."""
    fields = {"plan": dumps(outcome.plan.to_dict()) if outcome.plan is not None else ""}
    if outcome.run is not None:
        fields["run"] = dumps(run_doc(outcome.run))
    if "memory" in outcome.extra:
        fields["memory"] = dumps(outcome.extra["memory"])
    return fields


class IncidentStore:
    """The records of one graph's incidents. Usage::

    records = IncidentStore(store, window_s=300, retention_s=7 * 86400, queue_size=64)
    got = records.intake(alerts)          # raises QueueFull
    incident = records.get("7d2d332f")   # by incident or by any of its alerts
    """

    def __init__(
        self,
        store: GraphStore,
        *,
        window_s: float = 300.0,
        retention_s: float = 7 * 86400.0,
        queue_size: int = 64,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.conn = store.conn
        self.prefix = f"stackgraph:{store.graph_name}:"
        self.index = self.prefix + "incidents"
        self.keys = [stream_key(store.graph_name), self.index, self.prefix + "window"]
        self.window_s = window_s
        self.retention_s = retention_s
        self.queue_size = queue_size
        self.clock = clock
        self._script = self.conn.register_script(_SCRIPT)

    def _call(self, what: str, op: str, *args: Any) -> Any:
        with self.store.translate(what):
            return self._script(keys=self.keys, args=[op, self.prefix, *args])

    def _key(self, incident: str) -> str:
        return f"{self.prefix}incident:{incident}"

    # -- intake -----------------------------------------------------------------------

    def intake(self, alerts: Sequence[Alert], *, shadow: bool = False,
               plan: Plan | None = None) -> Received:  # fmt: skip
        """Record a webhook's alerts: firing ones join an incident or start one (and its
        investigation job), resolved ones close theirs once none of its alerts fires. All
        or nothing: raises QueueFull when a new investigation finds the backlog at
        `queue_size`. `plan` (ad hoc investigations) is the plan already made."""
        now = self.clock()
        items = [{
            "fp": str(a.fingerprint), "symptom": symptom_service(a), "status": a.status,
            "doc": dumps(alert_doc(a)), "shadow": "1" if shadow else "0",
            "opened_at": repr(float(a.starts_at if a.starts_at is not None else now)),
            "adhoc": "1" if plan is not None else "0",
            "plan": dumps(plan.to_dict()) if plan is not None else "",
        } for a in alerts]  # fmt: skip
        keep_s = max(1, int(self.retention_s))
        reply = self._call("recording alerts", "intake", repr(now), self.window_s, keep_s,
                           self.queue_size, dumps(items))  # fmt: skip
        got = json.loads(reply)
        if got.get("full"):
            raise QueueFull(f"the investigation queue is full ({got['backlog']} waiting, "
                            f"bound {self.queue_size})")  # fmt: skip

        def ids(name: str) -> list[str]:
            value = got.get(name)
            return [str(v) for v in value] if isinstance(value, list) else []

        return Received(ids("started"), ids("joined"), ids("closed"))

    # -- reads ------------------------------------------------------------------------

    def get(self, fingerprint: str) -> Incident:
        """An incident by its fingerprint, or the incident an alert fingerprint is in."""
        try:
            return self.load(fingerprint)
        except UnknownIncident:
            with self.store.translate("reading an incident"):
                holder = self.conn.get(f"{self.prefix}alert:{fingerprint}")
            if not holder:
                raise
            return self.load(str(holder))

    def load(self, incident: str) -> Incident:
        """The record of exactly this incident (a worker must not follow an alert into
        the incident it was grouped into)."""
        with self.store.translate("reading an incident"):
            pipe = self.conn.pipeline(transaction=True)
            pipe.hgetall(self._key(incident))
            pipe.hgetall(self._key(incident) + ":alerts")
            h, alerts = pipe.execute()
        if not h:
            raise UnknownIncident(f"no incident with fingerprint {incident!r}")
        return _incident(h, alerts, max(1, len(alerts)))

    def page(self, offset: int = 0, limit: int = 100) -> tuple[list[Incident], int]:
        """Newest first (by arrival), and how many there are in all."""
        with self.store.translate("listing incidents"):
            ids = [str(i) for i in self.conn.zrevrange(self.index, offset, offset + limit - 1)]
            pipe = self.conn.pipeline(transaction=False)
            for incident in ids:
                pipe.hgetall(self._key(incident))
                pipe.hlen(self._key(incident) + ":alerts")
            pipe.zcard(self.index)
            got = pipe.execute()
        pairs = zip(got[0:-1:2], got[1:-1:2], strict=True)
        return [_incident(h, None, max(1, n)) for h, n in pairs if h], int(got[-1])

    # -- changes ----------------------------------------------------------------------

    def update(self, incident: str, **fields: str | int | float) -> bool:
        """Set fields of an existing record; False when it is gone (merged, trimmed)."""
        args = [str(v) for kv in fields.items() for v in kv]
        return bool(self._call("updating an incident", "set", incident, *args))

    def finish(self, incident: str, rev: int, **fields: str | int | float) -> None:
        """Store an investigation's end; a change that arrived meanwhile (revision other
        than `rev`) queues one write job, so the graph learns it too."""
        args = [str(v) for kv in fields.items() for v in kv]
        self._call("finishing an incident", "finish", incident, str(rev), *args)

    def correlate(self, incident: str, key: CorrelationKey) -> str:
        """The incident this planned one goes on as: itself, or the open incident it
        joined (its alerts moved there, its record gone). '' when it no longer exists."""
        got = self._call("grouping incidents", "correlate", repr(self.clock()), self.window_s,
                         incident, key.top, dumps(list(key.path)), key.anchor)  # fmt: skip
        return str(got or "")

    def clear_write_pending(self, incident: str) -> None:
        with self.store.translate("updating an incident"):
            self.conn.hdel(self._key(incident), "write_pending")

    def trim(self, batch: int = 500) -> int:
        """Remove finished records older than the retention; returns how many."""
        cutoff = self.clock() - self.retention_s
        removed = 0
        with self.store.translate("trimming incidents"):
            old = self.conn.zrangebyscore(self.index, "-inf", cutoff, start=0, num=batch)
            for incident in map(str, old):
                key = self._key(incident)
                state = self.conn.hget(key, "state")
                if state is not None and state not in FINISHED:
                    continue
                self.conn.delete(key, key + ":alerts", key + ":firing")
                self.conn.zrem(self.index, incident)
                removed += 1
        return removed
