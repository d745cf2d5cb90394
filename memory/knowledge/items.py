"""Layered knowledge as versioned, provenance-carrying data (after OpsHarness).

| tier | kind | what | used by |
|---|---|---|---|
| K0 | guidance | general RCA guidance shipped with the project (`k0.yaml`) | a model's prompt |
| K1 | profile | this system: tiers, datastores, hot paths, signals per service | a model's prompt |
| K2 | skeleton | the order of checks that resolved an alert signature here | the floor |
| K3 | rule | `+` a hint, `-` an anti-pattern (a check to skip) for a signature | the floor |
| K3 | program | the program that ranks an alert signature's cause best here | the read path |

A `Knowledge` value is one version: immutable items, its parent version, the proposal that
made it and the gates it passed. `disclose` is progressive: K0 and K1 always; K2 by its
summary, in full when its signature matches; K3 by signature.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from importlib.resources import files
from typing import Any

import yaml

__all__ = [
    "ANY",
    "KINDS",
    "TIERS",
    "Item",
    "Knowledge",
    "shipped",
]

TIERS = ("K0", "K1", "K2", "K3")
KINDS = {"guidance": "K0", "profile": "K1", "skeleton": "K2", "rule": "K3", "program": "K3"}
ANY = "*"
"""The signature of an item that applies to every alert."""


@dataclass(frozen=True)
class Item:
    """One piece of knowledge. `data` is what the machine reads: a skeleton's `tools`, a
    rule's `tool`, a program choice's `program`; `provenance` says where it came from
    (shipped, mined from which trajectories, which model)."""

    id: str
    kind: str
    text: str
    signature: str = ANY
    polarity: str = "+"
    data: Mapping[str, Any] = field(default_factory=dict)
    provenance: Mapping[str, Any] = field(default_factory=dict)

    @property
    def tier(self) -> str:
        return KINDS[self.kind]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Item:
        return cls(str(d["id"]), str(d["kind"]), str(d.get("text", "")),
                   str(d.get("signature", ANY)), str(d.get("polarity", "+")),
                   dict(d.get("data") or {}), dict(d.get("provenance") or {}))  # fmt: skip


@dataclass(frozen=True)
class Knowledge:
    """One version of what is known (module docstring)."""

    version: int
    items: tuple[Item, ...]
    parent: int | None = None
    note: str = ""
    gates: Mapping[str, Any] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        body = json.dumps([i.to_dict() for i in sorted(self.items, key=lambda i: i.id)],
                          sort_keys=True)  # fmt: skip
        return hashlib.sha256(body.encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "parent": self.parent, "note": self.note,
                "gates": dict(self.gates), "digest": self.digest,
                "items": [i.to_dict() for i in self.items]}  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Knowledge:
        items = tuple(Item.from_dict(i) for i in d.get("items") or ())
        parent = d.get("parent")
        return cls(int(d["version"]), items, parent, str(d.get("note") or ""),
                   dict(d.get("gates") or {}))  # fmt: skip

    def get(self, item_id: str) -> Item | None:
        return next((i for i in self.items if i.id == item_id), None)

    def with_items(self, items: Iterable[Item], note: str) -> Knowledge:
        """The next version: these items, this one as its parent, not yet gated."""
        return Knowledge(self.version + 1, tuple(items), self.version, note)

    def matching(self, signature: str, kind: str) -> list[Item]:
        """Items of `kind` for this alert signature, the signature's own first."""
        own = [i for i in self.items if i.kind == kind and i.signature == signature]
        return own + [i for i in self.items if i.kind == kind and i.signature == ANY]

    def program_for(self, signature: str) -> Item | None:
        found = self.matching(signature, "program")
        return found[0] if found else None

    def tool_plan(self, signature: str) -> tuple[list[str], set[str], list[str]]:
        """(the checks to run first, in order; the checks to skip; the items used)."""
        order: list[str] = []
        used: list[str] = []
        for item in self.matching(signature, "skeleton")[:1]:
            order = [str(t) for t in item.data.get("tools") or ()]
            used.append(item.id)
        avoid: set[str] = set()
        for item in self.matching(signature, "rule"):
            tool = item.data.get("tool")
            if item.polarity == "-" and tool:
                avoid.add(str(tool))
                used.append(item.id)
        return order, avoid, used

    def disclose(self, signature: str) -> dict[str, list[str]]:
        """Progressive disclosure for a prompt: K0 and K1 in full; K2 summaries, in full
        for this signature; K3 for this signature."""
        out: dict[str, list[str]] = {t: [] for t in TIERS}
        for i in self.items:
            if i.tier in ("K0", "K1"):
                out[i.tier].append(i.text)
            elif i.tier == "K2":
                full = i.signature in (signature, ANY)
                out["K2"].append(i.text if full else f"{i.id} ({i.signature})")
            elif i.signature in (signature, ANY):
                out["K3"].append(f"{i.polarity} {i.text}")
        return out


def shipped() -> Knowledge:
    """Version 0: the shipped K0 guidance only."""
    raw = yaml.safe_load((files(__package__) / "k0.yaml").read_text(encoding="utf-8"))
    items = tuple(Item(str(d["id"]), "guidance", str(d["text"]),
                       provenance={"source": "shipped"}) for d in raw)  # fmt: skip
    return Knowledge(0, items, None, "shipped guidance")
