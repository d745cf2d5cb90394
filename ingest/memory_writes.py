"""Writer-side helpers for the incident memory: vector index, embeddings, expiry.

They run on a held `GraphIngestor` (its lease, its store) so the single-writer rule holds
for what `write(batch)` cannot express: `vecf32` properties, the vector index whose
dimension is pinned at creation, and closing an episode version on the transaction axis.
Like `write(batch)`, they validate against the schema first (the episode's natural key,
the model name, the clock) and refuse the whole call, naming the field, before writing.
"""

from __future__ import annotations

import math
import operator
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stackgraph import cypher
from stackgraph.errors import ConfigError, InputError
from stackgraph.schema import NodeRef, check_ref, check_value

from .writer import GraphIngestor


@dataclass(frozen=True)
class VectorIndexInfo:
    """The MemoryEpisode vector index as FalkorDB reports it."""

    dim: int
    status: str


def vector_index(store: Any) -> VectorIndexInfo | None:
    """The episode vector index and its pinned dimension, or None when there is none."""
    for row in store.read(cypher.load("memory_vector_index")):
        types = row.get("types") or {}
        kinds = types.get("embedding", []) if isinstance(types, dict) else []
        if "VECTOR" in [str(k).upper() for k in kinds]:
            opts = (row.get("options") or {}).get("embedding") or {}
            return VectorIndexInfo(int(opts.get("dimension", 0)), str(row.get("status", "")))
    return None


def check_dimension(store: Any, dim: int, embedder_name: str) -> VectorIndexInfo | None:
    """Refuse, at start-up, an embedder whose dimension differs from the pinned index."""
    info = vector_index(store)
    if info is not None and info.dim != dim:
        raise ConfigError(
            f"memory vector index MemoryEpisode.embedding on graph {store.graph_name!r} is "
            f"pinned to {info.dim}-d vectors but the embedder {embedder_name!r} makes {dim}-d "
            "vectors; use the embedder the memory was built with, or rebuild the memory "
            "into a new graph"
        )
    for row in store.read(cypher.load("memory_stats")):
        if row["model"] != embedder_name:
            raise ConfigError(
                f"memory on graph {store.graph_name!r} holds {row['n']} episode(s) embedded "
                f"with {row['model']!r} but the embedder is {embedder_name!r} "
                f"(both {dim}-d); vectors of different models do not compare"
            )
    return info


def ensure_vector_index(
    writer: GraphIngestor, dim: int, embedder_name: str, wait_s: float = 120.0
) -> None:
    """Create the HNSW index pinned to `dim` if absent (refuse a mismatch), then wait until
    it is OPERATIONAL: until then queryNodes fails with a misleading error."""
    writer.check_lease()
    if isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0:
        raise ConfigError(f"embedding dimension must be positive, got {dim}")
    info = check_dimension(writer.store, dim, embedder_name)
    if info is None:
        writer._write(cypher.load("memory_vector_index_create"), {"dim": int(dim)})
    deadline = time.monotonic() + wait_s
    while True:
        info = vector_index(writer.store)
        if info is not None and info.status.upper() == "OPERATIONAL":
            return
        if time.monotonic() > deadline:
            state = info.status if info else "missing"
            raise ConfigError(f"memory vector index did not become operational ({state})")
        time.sleep(0.05)


def check_vector(where: str, vector: Sequence[float] | Any, dim: int) -> list[float]:
    # FalkorDB stores a wrong-dimension vector silently (and leaves it out of the index).
    values = [float(v) for v in vector]
    if len(values) != dim:
        raise InputError(f"{where}: embedding has {len(values)} dimensions, the index {dim}")
    if not all(math.isfinite(v) for v in values):
        raise InputError(f"{where}: embedding has a NaN or infinite component")
    if not any(values):
        raise InputError(f"{where}: embedding is all zeros (cosine is undefined)")
    return values


def _episode(fingerprint: str, version: Any) -> dict[str, Any]:
    """The episode's natural key, refused (InputError) unless the schema accepts it."""
    ref = NodeRef("MemoryEpisode", {"incident_fingerprint": fingerprint, "version": version})
    try:  # a float 1.0 would not match the stored integer key
        if isinstance(version, bool):
            raise TypeError
        number = operator.index(version)
    except TypeError:
        raise InputError(f"{ref}: version must be an integer, got {version!r}") from None
    key = {"incident_fingerprint": fingerprint, "version": number}
    problems = check_ref(NodeRef("MemoryEpisode", key), str(ref), "memory", "key")
    if problems:
        raise InputError("; ".join(str(p) for p in problems))
    return key


def _scalar(where: str, value: Any) -> None:
    problem = check_value(value)
    if problem:
        raise InputError(f"{where} {problem}")


def write_vectors(
    writer: GraphIngestor,
    rows: Sequence[tuple[str, int, Sequence[float] | Any]],
    dim: int,
    model: str,
    batch_size: int = 500,
) -> int:
    """Attach `(fingerprint, version, vector)` embeddings to episode versions; all rows are
    checked before any is written. Returns how many episodes were updated."""
    _scalar("embedding model", model)
    checked = []
    for fp, v, vec in rows:
        key = _episode(fp, v)
        vector = check_vector(f"MemoryEpisode {fp}#{v}", vec, dim)
        checked.append({"fp": fp, "version": key["version"], "v": vector})
    done = 0
    for start in range(0, len(checked), batch_size):
        writer.check_lease()
        chunk = checked[start : start + batch_size]
        out = writer._write(cypher.load("memory_vectors_set"), {"rows": chunk, "model": model})
        done += int(out[0]["n"]) if out else 0
    return done


def expire_episode(writer: GraphIngestor, fingerprint: str, version: int, now: float) -> bool:
    """Close version `version` of an incident (and its edges) at transaction time `now`."""
    key = _episode(fingerprint, version)
    _scalar("expiry time", float(now))
    params = {"fp": fingerprint, "version": key["version"], "now": float(now)}
    out = writer._write(cypher.load("memory_expire"), params)
    return bool(out and int(out[0]["n"]))
