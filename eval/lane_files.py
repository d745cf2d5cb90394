"""What a replayed case hands the lanes, written as the files a user would point them at.

A case with no manifests becomes the inventory a cluster's API would list (a Deployment and
a Service per service whose pods the data has), read by the `infra` lane; releases become a
Flux status dump (one HelmRelease per released service, its `status.history` newest first),
read by the `change` lane; catalog criticality becomes a catalog file, read by the `catalog`
lane; log lines become logcli JSON Lines, read by the read path's file log source
(`rca.sources.FileLogs`). Pure builders plus writers; nothing here reaches the graph (the
lanes and the writer do).
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from stackgraph.ingest.lanes.telemetry import Span

from .datasets.model import ChangeEvent, LogRecord

__all__ = ["catalog_doc", "helm_releases", "inventory", "write_logs", "write_spans", "write_yaml"]


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def inventory(services: Iterable[str], namespace: str = "default") -> list[dict[str, Any]]:
    """A Deployment and a Service per service: what the Kubernetes API lists of workloads
    whose pods the data has, and nothing of how they call each other."""
    out: list[dict[str, Any]] = []
    for name in sorted(set(services)):
        meta = {"name": name, "namespace": namespace, "labels": {"app": name}}
        out.append({"apiVersion": "v1", "kind": "Service", "metadata": meta,
                    "spec": {"selector": {"app": name}, "ports": [{"port": 80}]}})  # fmt: skip
        pod = {"metadata": {"labels": {"app": name}},
               "spec": {"containers": [{"name": name, "image": name}]}}  # fmt: skip
        spec = {"selector": {"matchLabels": {"app": name}}, "template": pod}
        out.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
                    "spec": spec})  # fmt: skip
    return out


def helm_releases(
    changes: Iterable[ChangeEvent], namespace: str = "default"
) -> list[dict[str, Any]]:
    """One Flux HelmRelease per released service, its history newest first."""
    by_service: dict[str, list[ChangeEvent]] = defaultdict(list)
    for c in changes:
        by_service[c.service].append(c)
    out: list[dict[str, Any]] = []
    for service, releases in sorted(by_service.items()):
        ordered = sorted(releases, key=lambda c: c.at)
        history = []
        for n, c in enumerate(ordered, 1):
            digest = hashlib.sha256(f"{service}:{c.version}:{c.at}".encode()).hexdigest()
            history.append({
                "digest": f"sha256:{digest}",
                "chartName": service,
                "chartVersion": c.version,
                "version": n,
                "status": "deployed",
                "firstDeployed": _iso(c.at),
                "lastDeployed": _iso(c.at),
            })  # fmt: skip
        out.append({
            "apiVersion": "helm.toolkit.fluxcd.io/v2",
            "kind": "HelmRelease",
            "metadata": {"name": service, "namespace": namespace},
            "spec": {"chart": {"spec": {"chart": service}}},
            "status": {"history": list(reversed(history))},
        })  # fmt: skip
    return out


def catalog_doc(criticality: Mapping[str, str]) -> dict[str, Any]:
    """A catalog naming each service's criticality."""
    return {"services": [{"name": s, "criticality": c} for s, c in sorted(criticality.items())]}


def write_yaml(path: Path, docs: list[dict[str, Any]] | dict[str, Any]) -> Path:
    """`docs` as YAML (a list becomes a multi-document file); returns `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    items = docs if isinstance(docs, list) else [docs]
    path.write_text(yaml.safe_dump_all(items, sort_keys=False), encoding="utf-8")
    return path


def write_logs(path: Path, records: Iterable[LogRecord]) -> int:
    """Log lines as logcli JSON Lines (`timestamp` in ns, `labels`, `line`), each line
    once; returns how many were written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    seen: set[tuple[float, str, str, str]] = set()
    with path.open("w", encoding="utf-8") as fh:
        for r in sorted(records, key=lambda r: r.t):
            key = (r.t, r.service, r.span_id, r.line)
            if key in seen:
                continue
            seen.add(key)
            labels = {"service_name": r.service, "trace_id": r.trace_id, "span_id": r.span_id}
            doc = {"timestamp": str(round(r.t * 1e9)), "labels": labels, "line": r.line}
            fh.write(json.dumps(doc) + "\n")
    return len(seen)


def write_spans(path: Path, spans: Iterable[Span]) -> int:
    """Spans as the telemetry lane's CSV (kind and status left empty when unknown), each
    span once; returns how many were written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    seen: set[tuple[str, str]] = set()
    with path.open("w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["trace_id", "span_id", "parent_span_id", "service", "kind",
                      "duration_ms", "start_unix_s", "status"])  # fmt: skip
        for s in sorted(spans, key=lambda s: s.end_s):
            if (s.trace_id, s.span_id) in seen:
                continue
            seen.add((s.trace_id, s.span_id))
            start = f"{s.end_s - s.duration_ms / 1000.0:.6f}"
            status = "error" if s.error else ""
            out.writerow([s.trace_id, s.span_id, s.parent_id, s.service, s.kind,
                          repr(s.duration_ms), start, status])  # fmt: skip
    return len(seen)
