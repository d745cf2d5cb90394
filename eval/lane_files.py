"""What a replayed case hands the lanes, written as the files a user would point them at.

Releases become a Flux status dump (one HelmRelease per released service, its
`status.history` newest first), read by the `change` lane; catalog criticality becomes a
catalog file, read by the `catalog` lane; log lines become logcli JSON Lines, read by the
read path's file log source (`rca.sources.FileLogs`). Pure builders plus writers; nothing
here reaches the graph (the lanes and the writer do).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from .datasets.model import ChangeEvent, LogRecord

__all__ = ["catalog_doc", "helm_releases", "write_logs", "write_yaml"]


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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
