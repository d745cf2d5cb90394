"""A snapshot's Kubernetes objects checked and indexed by (kind, namespace, name)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from stackgraph.schema import Rejection

from .k8s_kinds import is_known
from .k8s_objects import Obj, is_ignored, meta, name_of, namespace_of

_CLUSTER_SCOPED = ("Namespace", "Node")


@dataclass
class Indexed:
    objs: dict[tuple[str, str, str], tuple[Obj, str]] = field(default_factory=dict)
    problems: list[Rejection] = field(default_factory=list)

    def of(self, *kinds: str) -> list[tuple[Obj, str]]:
        return [v for (k, _, _), v in self.objs.items() if k in kinds]


def _describe(obj: Obj) -> str:
    kind = obj.get("kind") or "?"
    ns = meta(obj).get("namespace")
    return f"{kind} {ns + '/' if isinstance(ns, str) and ns else ''}{name_of(obj) or '?'}"


def index_objects(objects: Sequence[Obj], origins: Sequence[str], kinds: Iterable[str]) -> Indexed:
    """Check each object's shape and kind; keep the last of duplicates, as `kubectl apply`."""
    wanted = set(kinds)
    out = Indexed()
    ignored_ns = {
        name_of(o) for o in objects if isinstance(o, dict) and o.get("kind") == "Namespace"
        and is_ignored(o)
    }  # fmt: skip
    for obj, origin in zip(objects, origins, strict=True):
        if not isinstance(obj, dict):
            out.problems.append(Rejection("document", "document", "is not an object", origin))
            continue
        kind, api = obj.get("kind"), obj.get("apiVersion")
        if not isinstance(kind, str) or not kind or not isinstance(api, str) or not api:
            msg = "a Kubernetes object needs `apiVersion` and `kind`; skipped"
            out.problems.append(Rejection(_describe(obj), "kind", msg, origin))
            continue
        if not name_of(obj):
            msg = "is missing; skipped"
            out.problems.append(Rejection(_describe(obj), "metadata.name", msg, origin))
            continue
        if not is_known(obj):
            msg = f"unknown kind {kind!r} ({api}); skipped"
            out.problems.append(Rejection(_describe(obj), "kind", msg, origin))
            continue
        if kind not in wanted or is_ignored(obj):
            continue
        ns = "" if kind in _CLUSTER_SCOPED else namespace_of(obj)
        if ns in ignored_ns or (kind == "Namespace" and name_of(obj) in ignored_ns):
            continue
        out.objs[(kind, ns, name_of(obj))] = (obj, origin)
    return out
