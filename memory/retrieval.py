"""Hybrid retrieval over the incident memory: vector + full-text + graph proximity, fused
by reciprocal rank fusion. No LLM anywhere: every score is computed from stored data, and
every hit says which retrievers found it and which entities it shares with the question.

Retrievers (each returns episode versions already filtered on both time axes):

- `vector`: cosine similarity of the question's embedding to episode embeddings;
- `bm25`: BM25 over episode text (memory/lexical.py says why not FalkorDB's full-text);
- `graph`: breadth-first from the alert's service over topology (CALLS, READS_FROM,
  PUBLISHES_TO, CONSUMES_FROM; two hops), plus entities named in the question, then
  MENTIONS back to episodes; weight 1 for a shared entity, 1/2 per hop away.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from stackgraph import cypher
from stackgraph.store import GraphStore

from .handle import Memory, open_memory
from .lexical import STOPWORDS

METHODS = ("vector", "bm25", "graph")
RRF_K = 10
"""RRF constant. Smaller than the customary 60 so the heads of the lists count; chosen
with WEIGHTS and GRAPH_MIN_SCORE on the labelled set (EVAL.md, memory section)."""
WEIGHTS = {"vector": 1.0, "bm25": 1.5, "graph": 0.5}
"""Per-retriever RRF weights; graph proximity is the weakest likeness signal."""
GRAPH_MIN_SCORE = 1.0
"""A graph hit needs a named error signature, or several weaker shared entities."""
STRONG_SEED = 0.5
"""Seeds at least this heavy (entities the question names) generate candidates; lighter
ones (service, neighbours, alert name) only add to a candidate's score. Their sum stays
below GRAPH_MIN_SCORE, so this bounds the work without changing the answer."""
SERVICE_WEIGHT = 0.25
ENTITY_WEIGHTS = {"error": 1.0, "alert": 0.25, "service": SERVICE_WEIGHT}
"""Weight of an entity the question names, by type (others 0.5): an error signature is
specific; an alert name (HighErrorRate) or a service is shared by unlike incidents."""
GRAPH_CANDIDATES = 150
"""At most this many candidates (most named entities shared, then most recent) are
scored: bounds the graph lane's work on a large memory."""

_LABEL_TYPE = {
    "Service": "service", "Datastore": "datastore",
    "ExternalApi": "external_api", "NatsSubject": "subject",
}  # fmt: skip
_REF = re.compile(r"^[a-z0-9][a-z0-9._@/-]*[a-z0-9]$|^[a-z0-9]$")


@dataclass(frozen=True)
class MemoryHit:
    """One incident the memory recalls, with why it matched."""

    incident: str
    version: int
    score: float
    why: list[str]
    retrievers: dict[str, int]
    """Retriever -> 1-based rank in that retriever's list."""
    shared_entities: list[str] = field(default_factory=list)
    service: str = ""
    alert: str = ""
    symptom: str = ""
    root_cause: str = ""
    resolution: str = ""
    t_valid: float | None = None
    t_invalid: float | None = None
    ingested_at: float | None = None
    expired_at: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Ranked:
    fp: str
    version: int
    score: float
    shared: tuple[str, ...] = ()


def candidate_refs(text: str) -> list[str]:
    """Words of the question that could name an entity (services, errors, datastores)."""
    out: dict[str, None] = {}
    for raw in text.lower().split():
        word = raw.strip(".,;:()[]{}\"'`!?")
        if word and _REF.match(word) and word not in STOPWORDS:
            out[word] = None
    return list(out)[:64]


def _clock_params(
    as_of: float | None,
    known_at: float | None,
    service: str | None,
    since: float | None,
    until: float | None,
    now: float | None,
) -> dict[str, Any]:
    t = float(time.time() if now is None else now)
    return {
        "as_of": float(t if as_of is None else as_of),
        "known_at": float(t if known_at is None else known_at),
        "service": service, "since": since, "until": until,
    }  # fmt: skip


def _dedupe(items: Iterable[_Ranked]) -> list[_Ranked]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item.fp not in seen:
            seen.add(item.fp)
            out.append(item)
    return out


def _pick(
    memory: Memory, raw: list[tuple[str, int, float]], params: dict[str, Any]
) -> list[_Ranked]:
    """Keep raw (fp, version, score) hits that pass both time axes and the filters."""
    if not raw:
        return []
    ids = [{"fp": fp, "version": v, "score": s} for fp, v, s in raw]
    rows = memory.store.read(cypher.load("memory_pick"), {**params, "ids": ids})
    rows.sort(key=lambda r: -float(r["score"]))
    return _dedupe(_Ranked(r["fp"], int(r["version"]), float(r["score"])) for r in rows)


def graph_seeds(store: GraphStore, text: str, service: str | None) -> dict[tuple[str, str], float]:
    """(entity type, ref) -> weight. Entities the question names weigh 1: a shared error
    signature or datastore is the strongest structural hint. The alert's service weighs
    SERVICE_WEIGHT and its topology neighbours half of that per hop: being near says
    less about likeness than what failed."""
    seeds: dict[tuple[str, str], float] = {}

    def add(kind: str, ref: str, w: float) -> None:
        key = (kind, ref.lower())
        seeds[key] = max(w, seeds.get(key, 0.0))

    if service:
        add("service", service, SERVICE_WEIGHT)
        for row in store.read(cypher.load("memory_topology"), {"service": service}):
            kind = _LABEL_TYPE.get(row["label"])
            if kind and row["name"]:
                add(kind, str(row["name"]), SERVICE_WEIGHT * 0.5 ** int(row["hops"]))
    refs = candidate_refs(text)
    if refs:
        for row in store.read(cypher.load("memory_entity_lookup"), {"refs": refs}):
            add(row["type"], row["ref"], ENTITY_WEIGHTS.get(row["type"], 0.5))
    return seeds


def _graph(
    store: GraphStore, text: str, service: str | None, params: dict[str, Any], fetch: int
) -> list[_Ranked]:
    seeds = graph_seeds(store, text, service)
    strong = [{"type": t, "ref": r, "w": w} for (t, r), w in seeds.items() if w >= STRONG_SEED]
    if not strong:
        return []
    rows = store.read(
        cypher.load("memory_by_entities"),
        {**params, "limit": fetch, "min_score": GRAPH_MIN_SCORE, "strong": strong,
         "cap": GRAPH_CANDIDATES,
         "weights": {f"{t}:{r}": w for (t, r), w in seeds.items()}},
    )  # fmt: skip
    return _dedupe(
        _Ranked(r["fp"], int(r["version"]), float(r["score"]), tuple(sorted(r["shared"])))
        for r in rows
    )


def _why(method: str, rank: int, item: _Ranked) -> str:
    if method == "vector":
        return f"vector: rank {rank} (cosine {item.score:.3f})"
    if method == "bm25":
        return f"bm25: rank {rank} (bm25 {item.score:.2f})"
    return f"graph: rank {rank} (shares {', '.join(item.shared) or 'neighbourhood'})"


Fused = tuple[str, int, float, dict[str, int], list[str], list[str]]


def fuse(lists: Mapping[str, Sequence[_Ranked]], limit: int) -> list[Fused]:
    """Reciprocal rank fusion: sum over retrievers of 1 / (RRF_K + rank)."""
    acc: dict[str, dict[str, Any]] = {}
    for method, items in lists.items():
        for rank, item in enumerate(items, start=1):
            slot = acc.setdefault(
                item.fp,
                {"version": item.version, "score": 0.0, "ranks": {}, "why": [], "shared": []},
            )
            slot["score"] += WEIGHTS[method] / (RRF_K + rank)
            slot["ranks"][method] = rank
            slot["why"].append(_why(method, rank, item))
            slot["shared"] += [s for s in item.shared if s not in slot["shared"]]
    ordered = sorted(acc.items(), key=lambda kv: (-kv[1]["score"], kv[0]))[:limit]
    return [(fp, s["version"], s["score"], s["ranks"], s["why"], s["shared"]) for fp, s in ordered]


def search(
    store: GraphStore,
    query: str,
    *,
    memory: Memory | None = None,
    service: str | None = None,
    only_service: bool = False,
    as_of: float | None = None,
    known_at: float | None = None,
    since: float | None = None,
    until: float | None = None,
    limit: int = 10,
    methods: Sequence[str] = METHODS,
    query_vector: np.ndarray | None = None,
    now: float | None = None,
    exclude: Sequence[str] = (),
) -> list[MemoryHit]:
    """Incidents like `query`, best first.

    `service` is the alert's service: it seeds graph proximity, and with `only_service`
    it also filters. `since`/`until` bound event time. `as_of`: what was true then;
    `known_at`: what the memory held then (both default to `now`). `exclude` drops
    incidents by fingerprint (leave-one-out evaluation)."""
    unknown = set(methods) - set(METHODS)
    if unknown:
        raise ValueError(f"unknown retrieval method(s) {sorted(unknown)}; use {METHODS}")
    limit = max(1, min(int(limit), 100))
    fetch = max(50, 5 * (limit + len(exclude)))
    params = _clock_params(as_of, known_at, service if only_service else None, since, until, now)
    mem = memory or open_memory(store)
    lists: dict[str, list[_Ranked]] = {}
    if "vector" in methods:
        vec = query_vector if query_vector is not None else mem.embedder.embed([query])[0]
        lists["vector"] = _pick(mem, mem.vectors.query(vec, fetch), params)
    if "bm25" in methods:
        lists["bm25"] = _pick(mem, mem.lexical.search(store, query, fetch), params)
    if "graph" in methods:
        lists["graph"] = _graph(store, query, service, params, fetch)
    if exclude:
        drop = set(exclude)
        lists = {m: [i for i in items if i.fp not in drop] for m, items in lists.items()}
    fused = fuse(lists, limit)
    if not fused:
        return []
    ids = [{"fp": fp, "version": v} for fp, v, *_ in fused]
    details = {
        (r["fp"], int(r["version"])): r
        for r in store.read(cypher.load("memory_details"), {"ids": ids})
    }
    hits = []
    for fp, version, score, ranks, why, shared in fused:
        d = details.get((fp, version), {})
        hits.append(
            MemoryHit(
                fp,
                version,
                round(score, 6),
                why,
                ranks,
                shared,
                d.get("service") or "",
                d.get("alert") or "",
                d.get("symptom") or "",
                d.get("root_cause") or "",
                d.get("resolution") or "",
                d.get("t_valid"),
                d.get("t_invalid"),
                d.get("ingested_at"),
                d.get("expired_at"),
            )
        )
    return hits
