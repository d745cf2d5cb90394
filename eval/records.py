"""Pure builders of CALLS-with-statistics and Deploy records, for benchmarks and tests.

The telemetry lane (Tempo service-graph metrics) and the change lane (Flux + Git) produce
these facts live. Generated platforms have the facts without those sources, so they are
written with `source: Synthetic` through the same single writer. The statistics are the
lane's own `EdgeStat`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from stackgraph.ingest.lanes.telemetry import EdgeStat
from stackgraph.schema import EdgeRecord, NodeRecord, NodeRef, RecordBatch, Source, Status


@dataclass(frozen=True)
class DeployEvent:
    service: str
    version: str
    at: float


def _clean(props: Mapping[str, float | None]) -> dict[str, float]:
    return {k: float(v) for k, v in props.items() if v is not None}


def edge_stat_records(
    stats: Iterable[EdgeStat],
    *,
    stale: Collection[tuple[str, str]] = (),
    labels: Mapping[str, str] | None = None,
    ensure_nodes: bool = True,
    source: str = Source.SYNTHETIC.value,
    origin: str = "synthetic",
) -> RecordBatch:
    """CALLS edges carrying trace_count / error_rate / latency_p95_ms.

    The (client, server) pairs in `stale` are written Stale. `labels` maps names to a label
    other than Service (Datastore, ExternalApi). With `ensure_nodes`, endpoints are emitted
    as nodes too (for a graph with no catalog); without, only edges are emitted so existing
    nodes keep their own provenance.
    """
    labels = labels or {}
    out = RecordBatch()
    seen: set[str] = set()
    for i, s in enumerate(stats):
        src = NodeRef(labels.get(s.client, "Service"), {"name": s.client})
        dst = NodeRef(labels.get(s.server, "Service"), {"name": s.server})
        if ensure_nodes:
            for ref in (src, dst):
                name = str(ref.key["name"])
                if name not in seen:
                    seen.add(name)
                    out.nodes.append(
                        NodeRecord(
                            ref.label, {"name": name}, {}, source, origin=f"{origin}: {name}"
                        )
                    )
        props = _clean(
            {
                "trace_count": s.trace_count,
                "error_rate": s.error_rate,
                "latency_p95_ms": s.latency_p95_ms,
            }
        )
        status = Status.STALE if (s.client, s.server) in stale else Status.ACTIVE
        out.edges.append(
            EdgeRecord(
                "CALLS", src, dst, props, source, status.value, origin=f"{origin}: edges[{i}]"
            )
        )
    return out


def deploy_records(
    deploys: Iterable[DeployEvent],
    *,
    source: str = Source.SYNTHETIC.value,
    origin: str = "synthetic",
) -> RecordBatch:
    """A Deploy node per rollout and its DEPLOYED edge to the service."""
    out = RecordBatch()
    for i, d in enumerate(deploys):
        digest = "sha256:" + hashlib.sha256(f"{d.service}:{d.version}".encode()).hexdigest()[:16]
        key = {"service": d.service, "image_digest": digest, "deployed_at": float(d.at)}
        where = f"{origin}: deploys[{i}]"
        out.nodes.append(NodeRecord("Deploy", key, {"version": d.version}, source, origin=where))
        out.edges.append(
            EdgeRecord(
                "DEPLOYED",
                NodeRef("Deploy", key),
                NodeRef("Service", {"name": d.service}),
                {},
                source,
                origin=where,
            )
        )
    return out
