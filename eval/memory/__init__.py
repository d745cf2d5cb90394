"""Memory retrieval quality on a labelled set: hybrid vs each single retriever, one run.

`incidents.yaml` holds 110 incidents in 22 groups of genuinely similar Kubernetes
incidents worded differently; `catalog.yaml` the topology they happen on. Each incident is
asked, leave-one-out, as an alert would ask it (alert name + symptom, plus its service):
the others of its group are the relevant answers. recall@5 = share of the group found in
the top 5; MRR = mean reciprocal rank of the first group member (top 10).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from stackgraph.errors import InputError
from stackgraph.ingest import GraphIngestor
from stackgraph.ingest.lanes.catalog import build, load_catalog
from stackgraph.memory import EntityRef, IncidentOutcome, Memory, open_memory, record_episode
from stackgraph.memory import search as memory_search
from stackgraph.store import GraphStore

__all__ = [
    "METHOD_SETS",
    "LabelledIncident",
    "data_path",
    "load_incidents",
    "load_set",
    "run_memory_eval",
]

METHOD_SETS: dict[str, tuple[str, ...]] = {
    "hybrid": ("vector", "bm25", "graph"),
    "vector": ("vector",),
    "bm25": ("bm25",),
    "graph": ("graph",),
}
_BASE_T = 1_700_000_000.0


@dataclass(frozen=True)
class LabelledIncident:
    fingerprint: str
    group: str
    outcome: IncidentOutcome

    @property
    def question(self) -> str:
        return f"{self.outcome.alert}: {self.outcome.symptom}"


def data_path(name: str) -> Path:
    """A file shipped with the labelled set (incidents.yaml, catalog.yaml)."""
    return Path(str(resources.files(__package__).joinpath(name)))


def load_incidents(path: Path | None = None) -> list[LabelledIncident]:
    """The labelled set; a malformed entry is named with its group and position."""
    path = path or data_path("incidents.yaml")
    try:
        groups = yaml.safe_load(path.read_text(encoding="utf-8"))["groups"]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        raise InputError(f"cannot read labelled incidents {path}: {exc}") from exc
    out: list[LabelledIncident] = []
    for group, items in groups.items():
        for i, item in enumerate(items):
            fp = f"{group}-{i + 1}"
            try:
                outcome = IncidentOutcome(
                    fp, item["service"], item["symptom"], _BASE_T + 3600.0 * len(out),
                    item.get("alert", ""), item.get("root_cause", ""), item.get("resolution", ""),
                    entities=[EntityRef.parse(e) for e in item.get("entities", [])],
                )  # fmt: skip
            except (KeyError, TypeError) as exc:
                raise InputError(f"{path}: group {group!r} item {i + 1}: {exc}") from exc
            outcome.check()
            out.append(LabelledIncident(fp, group, outcome))
    return out


def load_set(
    store: GraphStore, incidents: list[LabelledIncident], memory: Memory, catalog: Path
) -> None:
    """Topology from the catalog, then every incident as an episode (single writer)."""
    with GraphIngestor(store, who="memory-eval") as writer:
        writer.write(build(load_catalog(catalog)))
        for inc in incidents:
            record_episode(writer, inc.outcome, memory, now=_BASE_T + 1e6)


def run_memory_eval(
    store: GraphStore,
    *,
    memory: Memory | None = None,
    path: Path | None = None,
    catalog: Path | None = None,
    k: int = 5,
    depth: int = 10,
) -> dict[str, Any]:
    """Load the set into `store` (use a scratch graph) and score every method set:
    `{"methods": {"hybrid": {"recall5": x, "mrr": x}, ...}, "incidents": n, "groups": g}`."""
    incidents = load_incidents(path)
    mem = memory or open_memory(store)
    load_set(store, incidents, mem, catalog or data_path("catalog.yaml"))
    by_group: dict[str, set[str]] = {}
    for inc in incidents:
        by_group.setdefault(inc.group, set()).add(inc.fingerprint)
    vectors = mem.embedder.embed([inc.question for inc in incidents])
    totals = {name: {"recall": 0.0, "rr": 0.0} for name in METHOD_SETS}
    now = _BASE_T + 2e6
    for i, inc in enumerate(incidents):
        relevant = by_group[inc.group] - {inc.fingerprint}
        for name, methods in METHOD_SETS.items():
            hits = memory_search(
                store, inc.question, memory=mem, service=inc.outcome.service, limit=depth,
                methods=methods, query_vector=vectors[i], now=now, exclude=[inc.fingerprint],
            )  # fmt: skip
            ranked = [h.incident for h in hits]
            found = len(relevant & set(ranked[:k]))
            totals[name]["recall"] += found / min(len(relevant), k)
            first = next((r for r, fp in enumerate(ranked, 1) if fp in relevant), None)
            totals[name]["rr"] += 1.0 / first if first else 0.0
    n = len(incidents)
    return {
        "methods": {
            name: {f"recall{k}": round(t["recall"] / n, 4), "mrr": round(t["rr"] / n, 4)}
            for name, t in totals.items()
        },
        "incidents": n,
        "groups": len(by_group),
        "embedder": mem.embedder.name,
        "vectors": mem.vectors.name,
    }
