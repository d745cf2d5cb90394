"""The write side of the incident memory: episodes, entities and their versions.

An episode version is immutable except for one thing: closing it on the transaction axis
(`expired_at`). Nothing is deleted. Each version carries both clocks:

- event time  `t_valid` .. `t_invalid`: when its account was true in the world;
- transaction time `ingested_at` .. `expired_at`: when the memory held it as current.

A correction (feedback changes the root cause) expires the current version and writes a
new one over the same event-time span. A change in the world (a newer resolution from
time T) expires the current version and writes two: a copy that ends at T and the new
account from T. `SUPERSEDES` links each new version to the one it replaces.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from stackgraph import cypher
from stackgraph.errors import InputError
from stackgraph.ingest import GraphIngestor, IngestReport, expire_episode
from stackgraph.schema import MEMORY_ENTITY_TYPES, EdgeRecord, NodeRecord, NodeRef, RecordBatch

from .handle import Memory

SupersedeKind = Literal["correction", "change"]

_WORLD_LABEL = {
    "service": ("Service", "name"),
    "datastore": ("Datastore", "name"),
    "external_api": ("ExternalApi", "name"),
    "node": ("Node", "name"),
    "namespace": ("Namespace", "name"),
    "subject": ("NatsSubject", "subject"),
}
"""Entity types that REFER_TO a world-model node with the same name."""


@dataclass(frozen=True)
class EntityRef:
    """A thing an episode talks about, e.g. ("datastore", "orders-db"), ("error", "oomkilled")."""

    entity_type: str
    entity_ref: str

    @classmethod
    def parse(cls, text: str) -> EntityRef:
        kind, sep, ref = text.partition(":")
        if not sep:
            raise InputError(f"entity {text!r} must be TYPE:REF (types: {MEMORY_ENTITY_TYPES})")
        return cls(kind.strip(), ref)

    def normal(self) -> EntityRef:
        return EntityRef(self.entity_type.strip().lower(), self.entity_ref.strip().lower())

    def __str__(self) -> str:
        return f"{self.entity_type}:{self.entity_ref}"


@dataclass(frozen=True)
class IncidentOutcome:
    """What the RCA write-back knows about an incident; one episode version is made of it."""

    incident_fingerprint: str
    service: str
    symptom: str
    occurred_at: float
    """Event time the incident began (epoch seconds): the version's `t_valid`."""
    alert: str = ""
    root_cause: str = ""
    resolution: str = ""
    evidence: str = ""
    entities: Sequence[EntityRef] = ()
    resolved_by: Sequence[EntityRef] = ()
    source: str = "Synthetic"
    confidence: float = 1.0

    def text(self) -> str:
        """The episode text that is embedded and full-text indexed."""
        parts = [f"{self.alert or 'incident'} on {self.service}: {self.symptom.strip()}"]
        if self.root_cause:
            parts.append(f"Root cause: {self.root_cause.strip()}")
        if self.resolution:
            parts.append(f"Resolution: {self.resolution.strip()}")
        if self.evidence:
            parts.append(f"Evidence: {self.evidence.strip()}")
        return " ".join(p if p.endswith(".") else p + "." for p in parts)

    def all_entities(self) -> list[EntityRef]:
        """Declared entities plus the service and the alert, normalised and deduplicated."""
        seen: dict[EntityRef, None] = {EntityRef("service", self.service).normal(): None}
        if self.alert:
            seen[EntityRef("alert", self.alert).normal()] = None
        for ent in self.entities:
            seen[ent.normal()] = None
        return list(seen)

    def body_hash(self) -> str:
        body = {
            "service": self.service, "alert": self.alert, "symptom": self.symptom,
            "root_cause": self.root_cause, "resolution": self.resolution,
            "evidence": self.evidence, "occurred_at": float(self.occurred_at),
            "entities": sorted(str(e) for e in self.all_entities()),
            "resolved_by": sorted(str(e.normal()) for e in self.resolved_by),
        }  # fmt: skip
        blob = json.dumps(body, sort_keys=True, separators=(",", ":"))
        return hashlib.blake2b(blob.encode("utf-8"), digest_size=10).hexdigest()

    def check(self) -> None:
        """Refuse bad input before anything is written, naming the field."""
        where = f"incident {self.incident_fingerprint!r}"
        for name in ("incident_fingerprint", "service", "symptom"):
            if not str(getattr(self, name)).strip():
                raise InputError(f"{where}: {name} is empty")
        if not isinstance(self.occurred_at, int | float) or self.occurred_at != self.occurred_at:
            raise InputError(f"{where}: occurred_at must be epoch seconds")
        for kind, ents in (("entities", self.entities), ("resolved_by", self.resolved_by)):
            for ent in ents:
                norm = ent.normal()
                if norm.entity_type not in MEMORY_ENTITY_TYPES:
                    raise InputError(
                        f"{where}: {kind}: {ent.entity_type!r} is not one of "
                        f"{list(MEMORY_ENTITY_TYPES)}"
                    )
                if not norm.entity_ref:
                    raise InputError(f"{where}: {kind}: {ent.entity_type} has an empty ref")


@dataclass(frozen=True)
class EpisodeVersion:
    """One stored version of an incident, both clocks included."""

    incident_fingerprint: str
    version: int
    t_valid: float
    t_invalid: float | None
    ingested_at: float
    expired_at: float | None
    created: bool = False
    fields: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "incident": self.incident_fingerprint, "version": self.version,
            "t_valid": self.t_valid, "t_invalid": self.t_invalid,
            "ingested_at": self.ingested_at, "expired_at": self.expired_at, **self.fields,
        }  # fmt: skip


def _episode_ref(fp: str, version: int) -> NodeRef:
    return NodeRef("MemoryEpisode", {"incident_fingerprint": fp, "version": version})


def _entity_ref(ent: EntityRef) -> NodeRef:
    return NodeRef("MemoryEntity", {"entity_type": ent.entity_type, "entity_ref": ent.entity_ref})


def _version_batch(
    outcome: IncidentOutcome, version: int, t_valid: float, t_invalid: float | None, now: float
) -> RecordBatch:
    fp = outcome.incident_fingerprint
    clocks: dict[str, Any] = {"t_valid": float(t_valid), "ingested_at": float(now)}
    if t_invalid is not None:
        clocks["t_invalid"] = float(t_invalid)
    props: dict[str, Any] = {
        "service": outcome.service, "alert": outcome.alert, "symptom": outcome.symptom,
        "root_cause": outcome.root_cause, "resolution": outcome.resolution,
        "evidence": outcome.evidence, "text": outcome.text(), "body_hash": outcome.body_hash(),
        "resolved_by": [str(e.normal()) for e in outcome.resolved_by], **clocks,
    }  # fmt: skip
    origin = f"memory:{fp}#{version}"
    batch = RecordBatch()
    batch.nodes.append(
        NodeRecord(
            "MemoryEpisode",
            {"incident_fingerprint": fp, "version": version},
            props,
            outcome.source,
            confidence=outcome.confidence,
            origin=origin,
        )
    )
    ep = _episode_ref(fp, version)
    resolved = [e.normal() for e in outcome.resolved_by]
    for ent in {**dict.fromkeys(outcome.all_entities()), **dict.fromkeys(resolved)}:
        batch.nodes.append(NodeRecord("MemoryEntity", _entity_ref(ent).key, origin=origin))
        if ent.entity_type in _WORLD_LABEL:
            label, key = _WORLD_LABEL[ent.entity_type]
            batch.edges.append(
                EdgeRecord(
                    "REFERS_TO",
                    _entity_ref(ent),
                    NodeRef(label, {key: ent.entity_ref}),
                    origin=origin,
                )
            )
    for ent in outcome.all_entities():
        batch.edges.append(
            EdgeRecord("MENTIONS", ep, _entity_ref(ent), dict(clocks), origin=origin)
        )
    for ent in resolved:
        batch.edges.append(
            EdgeRecord("RESOLVED_BY", ep, _entity_ref(ent), dict(clocks), origin=origin)
        )
    return batch


def _write(writer: GraphIngestor, batch: RecordBatch) -> IngestReport:
    report = writer.write(batch)
    # REFERS_TO is best effort: the world-model may not hold that node (yet).
    hard = [
        r for r in report.rejected if not (r.field == "endpoint" and "-[:REFERS_TO]->" in r.record)
    ]
    if hard:
        raise InputError("memory write refused: " + "; ".join(str(r) for r in hard[:5]))
    return report


def _embed(memory: Memory, writer: GraphIngestor, items: list[tuple[str, int, str]]) -> None:
    vecs = memory.embedder.embed([text for _, _, text in items])
    memory.vectors.add(writer, [(fp, v, vecs[i]) for i, (fp, v, _) in enumerate(items)])


def versions(store: Any, fingerprint: str) -> list[EpisodeVersion]:
    """Every stored version of an incident, oldest first."""
    out = []
    for row in store.read(cypher.load("memory_versions"), {"fp": fingerprint}):
        fields = {
            k: row[k]
            for k in ("service", "alert", "symptom", "root_cause", "resolution", "evidence",
                      "text", "body_hash", "resolved_by")
        }  # fmt: skip
        fields["entities"] = sorted(e for e in row["entities"] if e)
        fields["supersedes"] = [s for s in row["supersedes"] if s.get("version") is not None]
        out.append(
            EpisodeVersion(
                fingerprint,
                int(row["version"]),
                float(row["t_valid"]),
                None if row["t_invalid"] is None else float(row["t_invalid"]),
                float(row["ingested_at"]),
                None if row["expired_at"] is None else float(row["expired_at"]),
                False,
                fields,
            )
        )
    return out


def current_version(store: Any, fingerprint: str) -> EpisodeVersion | None:
    """The newest version not yet expired (what the memory holds as true now)."""
    live = [v for v in versions(store, fingerprint) if v.expired_at is None]
    return max(live, key=lambda v: v.version) if live else None


def _outcome_of(v: EpisodeVersion, source: str = "Synthetic") -> IncidentOutcome:
    f = v.fields
    ents = [EntityRef.parse(e) for e in f["entities"]]
    return IncidentOutcome(
        v.incident_fingerprint, f["service"], f["symptom"], v.t_valid, f["alert"] or "",
        f["root_cause"] or "", f["resolution"] or "", f["evidence"] or "",
        [e for e in ents if e.entity_type not in ("service", "alert")],
        [EntityRef.parse(e) for e in f["resolved_by"] or []], source,
    )  # fmt: skip


def record_episode(
    writer: GraphIngestor, outcome: IncidentOutcome, memory: Memory, *, now: float | None = None
) -> EpisodeVersion:
    """Write an incident's outcome as an episode. Idempotent: the same outcome again writes
    nothing; a different outcome for a known incident supersedes it as a correction."""
    outcome.check()
    now = float(writer.clock() if now is None else now)
    cur = current_version(writer.store, outcome.incident_fingerprint)
    if cur is not None:
        if cur.fields.get("body_hash") == outcome.body_hash():
            return cur
        return supersede(writer, outcome, memory, kind="correction", reason="re-recorded", now=now)[
            -1
        ]
    _write(writer, _version_batch(outcome, 1, outcome.occurred_at, None, now))
    _embed(memory, writer, [(outcome.incident_fingerprint, 1, outcome.text())])
    return EpisodeVersion(
        outcome.incident_fingerprint, 1, float(outcome.occurred_at), None, now, None, True
    )


def supersede(
    writer: GraphIngestor,
    outcome: IncidentOutcome,
    memory: Memory,
    *,
    kind: SupersedeKind = "correction",
    reason: str = "",
    effective_at: float | None = None,
    now: float | None = None,
) -> list[EpisodeVersion]:
    """Replace the current version of `outcome.incident_fingerprint`; returns the versions
    written. `correction`: we were wrong (feedback), the new account covers the same event
    time. `change`: the world changed at `effective_at` (a newer resolution)."""
    outcome.check()
    now = float(writer.clock() if now is None else now)
    fp = outcome.incident_fingerprint
    all_versions = versions(writer.store, fp)
    live = [v for v in all_versions if v.expired_at is None]
    if not live:
        raise InputError(f"incident {fp!r} has no current memory episode to supersede")
    cur = max(live, key=lambda v: v.version)
    nxt = max(v.version for v in all_versions) + 1
    written: list[EpisodeVersion] = []
    texts: list[tuple[str, int, str]] = []
    if kind == "correction":
        t_valid = float(outcome.occurred_at)
        batch = _version_batch(outcome, nxt, t_valid, cur.t_invalid, now)
        batch.edges.append(_supersedes(fp, nxt, cur.version, "correction", reason, t_valid, now))
        written.append(EpisodeVersion(fp, nxt, t_valid, cur.t_invalid, now, None, True))
        texts.append((fp, nxt, outcome.text()))
    elif kind == "change":
        at = float(now if effective_at is None else effective_at)
        if at < cur.t_valid:
            raise InputError(
                f"incident {fp!r}: effective_at {at} is before the current version's "
                f"t_valid {cur.t_valid}"
            )
        old = _outcome_of(cur)
        batch = _version_batch(old, nxt, cur.t_valid, at, now)
        batch.edges.append(_supersedes(fp, nxt, cur.version, "closed", reason, cur.t_valid, now))
        new = replace(outcome, occurred_at=at)
        batch.extend(_version_batch(new, nxt + 1, at, None, now))
        batch.edges.append(_supersedes(fp, nxt + 1, nxt, "change", reason, at, now))
        written += [
            EpisodeVersion(fp, nxt, cur.t_valid, at, now, None, True),
            EpisodeVersion(fp, nxt + 1, at, None, now, None, True),
        ]
        texts += [(fp, nxt, old.text()), (fp, nxt + 1, new.text())]
    else:
        raise InputError(f"supersede kind {kind!r} is not 'correction' or 'change'")
    # new versions first, then close the old one: a crash in between leaves two current
    # versions (visible, repairable), never none
    _write(writer, batch)
    _embed(memory, writer, texts)
    expire_episode(writer, fp, cur.version, now)
    return written


def _supersedes(
    fp: str, new: int, old: int, kind: str, reason: str, t_valid: float, now: float
) -> EdgeRecord:
    props = {"kind": kind, "reason": reason or kind, "t_valid": t_valid, "ingested_at": now}
    return EdgeRecord("SUPERSEDES", _episode_ref(fp, new), _episode_ref(fp, old), props)
