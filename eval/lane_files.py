"""What a replayed case hands the lanes, written as the files a user would point them at.

Releases become a Flux status dump (one HelmRelease per released service, its
`status.history` newest first), read by the `change` lane; catalog criticality becomes a
catalog file, read by the `catalog` lane. Pure builders plus one writer; nothing here
reaches the graph (the lanes and the writer do).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from .datasets.model import ChangeEvent

__all__ = ["catalog_doc", "helm_releases", "write_yaml"]


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
