"""Rollouts as `Deploy` nodes: Flux HelmRelease / Kustomization history and plain
Deployment rollouts (ReplicaSet revisions), each linked to the Change its revision names.

    HelmRelease (helm.toolkit.fluxcd.io/v2)   status.history[]: digest, chartVersion
        (`1.2.0+3f2a1bc9d0e1` when the chart comes from Git), version, status, lastDeployed
    Kustomization (kustomize.toolkit.fluxcd.io/v1)  status.history[]: digest,
        firstReconciled, lastReconciledStatus, metadata.revision `main@sha1:<sha>`;
        status.inventory.entries[].id `<ns>_<name>_<group>_<kind>` names the workloads
    ReplicaSet owned by a Deployment: annotation deployment.kubernetes.io/revision,
        creationTimestamp, the image it runs

`deployed_at` is a time that does not move on later reconciliations (lastDeployed of a Helm
release version, firstReconciled of a Kustomization revision, the ReplicaSet's creation),
so re-reading the same status yields the same Deploy keys.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stackgraph.schema import EdgeRecord, NodeRecord, RecordBatch, Source, Status

from .datastores import image_name
from .k8s_kinds import INFRA_KINDS
from .k8s_objects import (
    Obj,
    annotations_of,
    as_list,
    dig,
    epoch,
    main_container,
    meta,
    name_of,
    namespace_of,
    steer,
)
from .units import Topology, Unit, resolve_units

SRC = Source.STATIC_INFRA
_SHA1 = re.compile(r"sha1:([0-9a-f]{40})")
_BUILD_META = re.compile(r"\+([0-9a-f]{7,40})$")
_BARE = re.compile(r"^[0-9a-f]{7,40}$")
_WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet")


def commit_ref(text: Any) -> str | None:
    """The commit sha a revision string names, if any: `main@sha1:<sha>`, a chart version
    `1.2.0+<sha>`, an image tag or a bare sha. OCI digests (`sha256:`) are not commits."""
    if not isinstance(text, str) or not text:
        return None
    for pattern in (_SHA1, _BUILD_META):
        m = pattern.search(text)
        if m:
            return m.group(1)
    return text if _BARE.match(text) and not text.isdigit() else None


def _image_ref(image: str) -> str | None:
    if "@" in image:
        return None
    tag = image.rsplit("/", 1)[-1].split(":", 1)
    return commit_ref(tag[1]) if len(tag) == 2 else None


@dataclass(frozen=True)
class Rollout:
    service: str
    namespace: str
    digest: str
    deployed_at: int
    props: dict[str, Any]
    commit: str | None
    origin: str
    label: str = "Service"


def _helm(obj: Obj, origin: str) -> Iterable[Rollout]:
    ns, name = namespace_of(obj), name_of(obj)
    service = steer(obj, "service") or name
    history = [h for h in as_list(dig(obj, "status", "history")) if isinstance(h, dict)]
    attempted = dig(obj, "status", "lastAttemptedRevision")
    for i, h in enumerate(history):
        digest, at = h.get("digest"), epoch(h.get("lastDeployed")) or epoch(h.get("firstDeployed"))
        if not isinstance(digest, str) or at is None:
            continue
        chart_version = str(h.get("chartVersion") or "")
        ref = commit_ref(chart_version)
        if ref is None and i == 0 and attempted == chart_version:
            ref = commit_ref(attempted)
        ref = ref or (commit_ref(steer(obj, "revision")) if i == 0 else None)
        props: dict[str, Any] = {
            "via": "HelmRelease",
            "release": f"{ns}/{name}",
            "chart_name": str(h.get("chartName") or ""),
            "chart_version": chart_version,
            "release_status": str(h.get("status") or ""),
        }
        if isinstance(h.get("version"), int):
            props["release_version"] = h["version"]
        for src_key, dst_key in (("appVersion", "app_version"), ("configDigest", "config_digest")):
            if h.get(src_key):
                props[dst_key] = str(h[src_key])
        if ref:
            props["revision"] = ref
        yield Rollout(service, ns, digest, at, props, ref, origin)


def _inventory_workloads(obj: Obj) -> list[tuple[str, str, str]]:
    out = []
    for entry in as_list(dig(obj, "status", "inventory", "entries")):
        parts = str(dig(entry, "id") or "").split("_")
        if len(parts) == 4 and parts[3] in _WORKLOADS:
            out.append((parts[3], parts[0], parts[1]))
    return sorted(out)


def _kustomization(obj: Obj, origin: str, topo: Topology) -> Iterable[Rollout]:
    ns, name = namespace_of(obj), name_of(obj)
    explicit = steer(obj, "service")
    units: list[tuple[Unit, str]]
    if explicit:
        units = [(Unit("Service", s.strip()), ns) for s in explicit.split(",") if s.strip()]
    else:
        units = []
        for kind, wns, wname in _inventory_workloads(obj):
            unit = topo.workloads.get((kind, wns, wname), Unit("Service", wname))
            units.append((unit, wns))
        units = units or [(Unit("Service", name), ns)]
    history = [h for h in as_list(dig(obj, "status", "history")) if isinstance(h, dict)]
    if not history and dig(obj, "status", "lastAppliedRevision"):
        ready = next((c for c in as_list(dig(obj, "status", "conditions"))
                      if dig(c, "type") == "Ready"), None)  # fmt: skip
        applied = dig(obj, "status", "lastAppliedRevision")
        history = [
            {
                "digest": applied,
                "firstReconciled": dig(ready, "lastTransitionTime"),
                "lastReconciledStatus": dig(ready, "reason"),
                "metadata": {"revision": applied},
            }
        ]
    for h in history:
        digest, at = h.get("digest"), epoch(h.get("firstReconciled"))
        if not isinstance(digest, str) or at is None:
            continue
        revision = dig(h, "metadata", "revision")
        ref = commit_ref(revision)
        props: dict[str, Any] = {
            "via": "Kustomization",
            "kustomization": f"{ns}/{name}",
            "reconcile_status": str(h.get("lastReconciledStatus") or ""),
        }
        if isinstance(revision, str):
            props["source_revision"] = revision
        if ref:
            props["revision"] = ref
        for unit, uns in units:
            yield Rollout(unit.name, uns, digest, at, props, ref, origin, unit.label)


def _image_digest(image: str) -> str:
    return image.split("@", 1)[1] if "@" in image else image


def _rollout_props(obj: Obj, via: str, image: str) -> dict[str, Any]:
    props: dict[str, Any] = {"via": via, "image": image, "image_name": image_name(image)}
    rev = annotations_of(obj).get("deployment.kubernetes.io/revision", "")
    if rev.isdigit():
        props["rollout_revision"] = int(rev)
    return props


def _replicasets(
    objs: Sequence[tuple[Obj, str]], topo: Topology
) -> tuple[list[Rollout], set[tuple[str, str]]]:
    out: list[Rollout] = []
    covered: set[tuple[str, str]] = set()
    for obj, origin in objs:
        if obj.get("kind") != "ReplicaSet":
            continue
        ns = namespace_of(obj)
        owner = next((dig(o, "name") for o in as_list(meta(obj).get("ownerReferences"))
                      if dig(o, "kind") == "Deployment"), None)  # fmt: skip
        main = main_container(obj)
        at = epoch(meta(obj).get("creationTimestamp"))
        if not isinstance(owner, str) or main is None or at is None:
            continue
        unit = topo.workloads.get(("Deployment", ns, owner))
        if unit is None or unit.label == "ExternalApi":
            continue
        covered.add((ns, owner))
        image = str(main.get("image") or "")
        ref = commit_ref(steer(obj, "revision")) or _image_ref(image)
        props = _rollout_props(obj, "ReplicaSet", image) | {"deployment": f"{ns}/{owner}"}
        if ref:
            props["revision"] = ref
        out.append(Rollout(unit.name, ns, _image_digest(image), at, props, ref, origin,
                           unit.label))  # fmt: skip
    return out, covered


def _deployments(
    objs: Sequence[tuple[Obj, str]], topo: Topology, covered: set[tuple[str, str]]
) -> list[Rollout]:
    """A Deployment's current rollout, when its status says when (dumps without RSs)."""
    out = []
    for obj, origin in objs:
        ns, name = namespace_of(obj), name_of(obj)
        if obj.get("kind") != "Deployment" or (ns, name) in covered:
            continue
        cond = next((c for c in as_list(dig(obj, "status", "conditions"))
                     if dig(c, "type") == "Progressing"
                     and dig(c, "reason") == "NewReplicaSetAvailable"), None)  # fmt: skip
        at = epoch(dig(cond, "lastUpdateTime"))
        main = main_container(obj)
        unit = topo.workloads.get(("Deployment", ns, name))
        if at is None or main is None or unit is None:
            continue
        image = str(main.get("image") or "")
        ref = commit_ref(steer(obj, "revision")) or _image_ref(image)
        props = _rollout_props(obj, "Deployment", image) | {"deployment": f"{ns}/{name}"}
        if ref:
            props["revision"] = ref
        out.append(Rollout(unit.name, ns, _image_digest(image), at, props, ref, origin,
                           unit.label))  # fmt: skip
    return out


def rollouts(objects: Sequence[Obj], origins: Sequence[str]) -> list[Rollout]:
    """Every rollout the objects tell of (pure)."""
    pairs = [(o, w) for o, w in zip(objects, origins, strict=True) if isinstance(o, dict)]
    topo = resolve_units(objects=[o for o, _ in pairs if o.get("kind") in INFRA_KINDS])
    out: list[Rollout] = []
    for obj, origin in pairs:
        if obj.get("kind") == "HelmRelease" and str(obj.get("apiVersion", "")).startswith(
            "helm.toolkit.fluxcd.io/"
        ):
            out.extend(_helm(obj, origin))
        elif obj.get("kind") == "Kustomization" and str(obj.get("apiVersion", "")).startswith(
            "kustomize.toolkit.fluxcd.io/"
        ):
            out.extend(_kustomization(obj, origin, topo))
    rs, covered = _replicasets(pairs, topo)
    out.extend(rs)
    out.extend(_deployments(pairs, topo, covered))
    return out


def build_deploys(
    found: Sequence[Rollout],
    *,
    known: Mapping[str, str],
    changes: Mapping[str, tuple[str, str]],
) -> RecordBatch:
    """Pure: rollouts to Deploy nodes, DEPLOYED edges and CHANGED edges to known Changes.

    `known` maps names of Service/Datastore nodes already in the graph to their label; a
    rollout of a name not there adds a Candidate Service. `changes` maps a (short) sha to
    the (repo, full sha) of its Change node.
    """
    out = RecordBatch()
    stubs: set[str] = set()
    for r in found:
        label = known.get(r.service, r.label)
        if r.service not in known and r.service not in stubs and label == "Service":
            stubs.add(r.service)
            out.nodes.append(NodeRecord("Service", {"name": r.service}, {"namespace": r.namespace},
                                        SRC, Status.CANDIDATE, 0.5, origin=r.origin))  # fmt: skip
        key = {"service": r.service, "image_digest": r.digest, "deployed_at": r.deployed_at}
        out.nodes.append(NodeRecord("Deploy", key, {**r.props, "namespace": r.namespace}, SRC,
                                    origin=r.origin))  # fmt: skip
        me = NodeRecord("Deploy", key).ref
        target = NodeRecord(label, {"name": r.service}).ref
        out.edges.append(EdgeRecord("DEPLOYED", me, target, {}, SRC, origin=r.origin))
        hit = changes.get(r.commit) if r.commit else None
        if hit is not None:
            dst = NodeRecord("Change", {"repo": hit[0], "commit_sha": hit[1]}).ref
            out.edges.append(EdgeRecord("CHANGED", me, dst, {}, Source.GIT, origin=r.origin))
    return out
