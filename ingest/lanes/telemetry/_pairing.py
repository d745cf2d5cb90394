"""Spans paired into calls, as Tempo's service graph processor pairs them.

- a CLIENT (or PRODUCER) span whose child SERVER (or CONSUMER) span is in another service
  is one request `client -> server` (`messaging_system` for producer/consumer);
- a root SERVER/CONSUMER span is a request from the virtual client `user`;
- a CLIENT span without a server child but with database attributes (`db.namespace`,
  `db.name`, `db.system`) is a `database` request to the node named by `peer.service`,
  `server.address`, `network.peer.address[:port]`, `db.namespace` or `db.name`; with a
  peer attribute (`peer.service`, `db.name`, `db.system`) it is a request to a virtual
  server of that name;
- spans recorded **without a kind**: a child span in another service than its parent's is
  the call parent → child, and a root span is called by `user` (tracers that record only
  operations, like the Nezha datasets', leave kinds out);
- a request failed when either span has an error status; its latency is the server (child)
  span's duration (the client span's when the server is virtual), and the caller's wait
  its parent's (Tempo's client histogram; for kind-less spans the parent is the caller's
  span the call was made in, its exit span where the tracer records one).

`pair_report` says how many spans were read and, when none paired, why.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ._edges import USER_CLIENT, EdgeStat
from ._span import Span

__all__ = ["pair_report", "stats_from_spans"]

_DB_MARKERS = ("db.namespace", "db.name", "db.system")
_DB_NAME_ORDER = ("peer.service", "server.address", "network.peer.address", "db.namespace",
                  "db.name")  # fmt: skip
_PEER_ATTRIBUTES = ("peer.service", "db.name", "db.system")
_SUBJECT_ATTRIBUTES = ("messaging.destination.name", "messaging.destination")
_Key = tuple[str, str, str, str, str]


def _first(attrs: Mapping[str, str], names: Iterable[str]) -> str:
    for name in names:
        value = attrs.get(name)
        if value:
            if name == "network.peer.address" and attrs.get("network.peer.port"):
                return f"{value}:{attrs['network.peer.port']}"
            return value
    return ""


@dataclass
class _Pair:
    count: int = 0
    failed: int = 0
    durations: list[float] = field(default_factory=list)
    waits: list[float] = field(default_factory=list)
    """The caller's span of each call, where there is one: the call as the caller waited."""


def _pairs(spans: Sequence[Span]) -> dict[_Key, _Pair]:
    by_id = {(s.trace_id, s.span_id): s for s in spans}
    has_child: set[tuple[str, str]] = set()
    pairs: dict[_Key, _Pair] = defaultdict(_Pair)

    def record(key: _Key, error: bool, duration_ms: float, waited_ms: float | None) -> None:
        pair = pairs[key]
        pair.count += 1
        pair.failed += int(error)
        pair.durations.append(duration_ms)
        if waited_ms is not None:
            pair.waits.append(waited_ms)

    for span in spans:
        if not span.service or span.kind not in ("server", "consumer", ""):
            continue
        parent = by_id.get((span.trace_id, span.parent_id)) if span.parent_id else None
        subject = _first(span.attributes, _SUBJECT_ATTRIBUTES)
        if not span.parent_id:
            record((USER_CLIENT, span.service, "virtual_node", "client", subject), span.error,
                   span.duration_ms, None)  # fmt: skip
            continue
        if parent is None or parent.kind not in (("client", "producer") if span.kind else ("",)):
            continue
        has_child.add((parent.trace_id, parent.span_id))
        if parent.service == span.service or not parent.service:
            continue
        messaging = parent.kind == "producer" or span.kind == "consumer"
        database = any(parent.attributes.get(a) for a in _DB_MARKERS)
        ctype = "messaging_system" if messaging else "database" if database else ""
        subject = subject or _first(parent.attributes, _SUBJECT_ATTRIBUTES)
        # a client span's error is the caller's view of this call; a kind-less parent is
        # the caller's own work, whose error is not this call's
        failed = (parent.error and bool(parent.kind)) or span.error
        record((parent.service, span.service, ctype, "", subject if messaging else ""),
               failed, span.duration_ms, parent.duration_ms)  # fmt: skip

    for span in spans:
        if span.kind != "client" or (span.trace_id, span.span_id) in has_child:
            continue
        if any(span.attributes.get(a) for a in _DB_MARKERS):
            name = _first(span.attributes, _DB_NAME_ORDER)
            if name:
                record((span.service, name, "database", "server", ""), span.error,
                       span.duration_ms, span.duration_ms)  # fmt: skip
                continue
        peer = _first(span.attributes, _PEER_ATTRIBUTES)
        if peer and span.service:
            record((span.service, peer, "virtual_node", "server", ""), span.error,
                   span.duration_ms, span.duration_ms)  # fmt: skip
    return pairs


def _p95(values: list[float]) -> float:
    """numpy's default (linear) 95th percentile, without numpy's per-call overhead: a window
    holds thousands of pairs of a few calls each, where `np.percentile` costs ~100x more."""
    ordered = sorted(values)
    pos = 0.95 * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def stats_from_spans(spans: Sequence[Span]) -> tuple[list[EdgeStat], float]:
    """Pair spans as Tempo's service graph does; return the pair stats and the last end time."""
    stats = [
        EdgeStat(
            client=c,
            server=s,
            trace_count=p.count,
            error_rate=p.failed / p.count,
            latency_p95_ms=_p95(p.durations),
            waited_p95_ms=_p95(p.waits) if p.waits else None,
            connection_type=ctype,
            virtual_node=virtual,
            subject=subject,
        )
        for (c, s, ctype, virtual, subject), p in sorted(_pairs(spans).items())
    ]
    seen_at = max((s.end_s for s in spans), default=0.0)
    return stats, seen_at


def pair_report(spans: Sequence[Span], stats: Sequence[EdgeStat]) -> str:
    """One line: spans read, calls paired, and why none paired when none did."""
    calls = sum(int(s.trace_count) for s in stats)
    line = f"{len(spans)} span(s) read, {calls} call(s) on {len(stats)} pair(s)"
    if stats or not spans:
        return line
    services = {s.service for s in spans if s.service}
    if len(services) <= 1:
        why = f"every span is in one service ({next(iter(services), 'none named')})"
    elif not any(s.parent_id for s in spans):
        why = "no span names a parent"
    else:
        why = "no child span's parent is in another service, or the kinds never pair"
    return f"{line}: none paired, {why}"
