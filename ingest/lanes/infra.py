"""The `infra` lane: Kubernetes objects to topology (what runs where, and what routes to it).

`build(objects)` is pure over parsed objects (dicts); `load_manifests(dir)` and
`load_live(api_client)` are the thin loaders. Names follow the k8s Service names, the
names traces and alerts carry:

    Deployment/StatefulSet/DaemonSet ─ pod labels ⊇ Service selector ─▶ Service "cartservice"
    (no Service selects it: the `app.kubernetes.io/name` / `app` / `name` label, else its name)
    a datastore image (redis, postgres, ...) or `stackgraph.io/datastore` ─▶ Datastore
    Service type ExternalName ─▶ ExternalApi;  Ingress / IngressRoute ─▶ Route -ROUTES_TO->
    Pods (live) ─▶ Deployment -RUNS_ON-> Node

Users steer it with annotations: `stackgraph.io/criticality`, `stackgraph.io/owner`,
`stackgraph.io/ignore: "true"` (on a Namespace: the whole namespace), and
`stackgraph.io/service` / `stackgraph.io/datastore` to name or classify a workload.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stackgraph.errors import InputError
from stackgraph.schema import CRITICALITY, EdgeRecord, NodeRecord, RecordBatch, Rejection, Source

from .datastores import PORT_SYSTEMS, images, recognise
from .k8s_kinds import INFRA_KINDS, WORKLOAD_KINDS, is_known
from .k8s_objects import (
    Obj,
    Snapshot,
    as_list,
    dig,
    is_ignored,
    labels,
    load_manifests,
    main_container,
    meta,
    name_of,
    namespace_of,
    pod_template,
    steer,
    str_map,
)
from .registry import LaneInputs, register
from .routes import ROUTE_KINDS, routes_of
from .selectors import match_selectors

SRC = Source.STATIC_INFRA
APP_LABELS = ("app.kubernetes.io/name", "app", "name", "k8s-app")
_CLUSTER_SCOPED = ("Namespace", "Node")

__all__ = ["Topology", "Unit", "build", "collect", "resolve_units"]


@dataclass(frozen=True)
class Unit:
    """What a workload or k8s Service is in the graph: a Service, Datastore or ExternalApi."""

    label: str
    name: str

    @property
    def ref(self) -> Any:
        return NodeRecord(self.label, {"name": self.name}).ref


@dataclass
class Topology:
    """Workloads and k8s Services resolved to graph units (shared with the change lane)."""

    workloads: dict[tuple[str, str, str], Unit] = field(default_factory=dict)
    """(kind, namespace, name) -> unit"""
    services: dict[tuple[str, str], Unit] = field(default_factory=dict)
    """(namespace, k8s Service name) -> unit"""
    props: dict[Unit, dict[str, Any]] = field(default_factory=dict)
    origins: dict[Unit, str] = field(default_factory=dict)
    aliases: dict[Unit, set[str]] = field(default_factory=lambda: defaultdict(set))


@dataclass
class _Indexed:
    objs: dict[tuple[str, str, str], tuple[Obj, str]] = field(default_factory=dict)
    problems: list[Rejection] = field(default_factory=list)

    def of(self, *kinds: str) -> list[tuple[Obj, str]]:
        return [v for (k, _, _), v in self.objs.items() if k in kinds]


def _describe(obj: Obj) -> str:
    kind = obj.get("kind") or "?"
    ns = meta(obj).get("namespace")
    return f"{kind} {ns + '/' if isinstance(ns, str) and ns else ''}{name_of(obj) or '?'}"


def _index(objects: Sequence[Obj], origins: Sequence[str], kinds: Iterable[str]) -> _Indexed:
    """Check each object's shape and kind; keep the last of duplicates, as `kubectl apply`."""
    wanted = set(kinds)
    out = _Indexed()
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


Key = tuple[str, str, str]


def _selected(
    by_ns: Mapping[str, list[tuple[str, Obj, str]]], workloads: list[tuple[Key, Obj]]
) -> dict[Key, list[tuple[str, Obj]]]:
    """Each workload's selecting k8s Services (name, object), namespace by namespace."""
    pods: dict[str, list[tuple[Key, Mapping[str, str]]]] = defaultdict(list)
    for key, obj in workloads:
        pods[key[1]].append((key, str_map(dig(pod_template(obj), "metadata", "labels"))))
    out: dict[Key, list[tuple[str, Obj]]] = {}
    for ns, templates in pods.items():
        services = [((sname, sobj), str_map(dig(sobj, "spec", "selector")))
                    for sname, sobj, _ in by_ns.get(ns, [])]  # fmt: skip
        out |= match_selectors(services, templates)
    return out


def _primary(candidates: list[tuple[str, Obj]], app: str | None, workload: str) -> str:
    """Of several k8s Services selecting one workload, the one its callers use."""

    def rank(c: tuple[str, Obj]) -> tuple[int, int, int, str]:
        name, svc = c
        typ = dig(svc, "spec", "type") or "ClusterIP"
        named = 0 if name in (app, workload) else 1
        return (named, 0 if typ == "ClusterIP" else 1, len(name), name)

    return min(candidates, key=rank)[0]


def _app_name(obj: Obj) -> str:
    pod_labels = str_map(dig(pod_template(obj), "metadata", "labels")) or labels(obj)
    for key in APP_LABELS:
        if pod_labels.get(key):
            return pod_labels[key]
    return name_of(obj)


def _service_ports(svc: Obj) -> list[int]:
    ports = []
    for p in as_list(dig(svc, "spec", "ports")):
        for key in ("targetPort", "port"):
            v = dig(p, key)
            if isinstance(v, int):
                ports.append(v)
    return ports


def resolve_units(idx: _Indexed | None = None, objects: Sequence[Obj] = ()) -> Topology:
    """Map every workload and k8s Service onto the Service/Datastore/ExternalApi it is."""
    if idx is None:
        idx = _index(objects, [""] * len(objects), INFRA_KINDS)
    topo = Topology()
    by_ns: dict[str, list[tuple[str, Obj, str]]] = defaultdict(list)
    for (kind, ns, name), (obj, origin) in idx.objs.items():
        if kind == "Service":
            by_ns[ns].append((name, obj, origin))
    claimed: set[tuple[str, str]] = set()
    workloads = [(key, obj) for key, (obj, _) in idx.objs.items() if key[0] in WORKLOAD_KINDS]
    selected = _selected(by_ns, workloads)

    for (kind, ns, name), (obj, origin) in idx.objs.items():
        if kind not in WORKLOAD_KINDS:
            continue
        matching = selected[(kind, ns, name)]
        explicit = steer(obj, "service")
        app = _app_name(obj)
        if explicit:
            unit_name = explicit
        elif matching:
            unit_name = _primary(matching, app, name)
        else:
            unit_name = app
        system = recognise(obj, [s for _, s in matching])
        unit = Unit("Datastore" if system else "Service", unit_name)
        topo.workloads[(kind, ns, name)] = unit
        _merge_props(topo, unit, ns, origin, system, [obj, *(s for _, s in matching)])
        for sname, _ in matching:
            claimed.add((ns, sname))
            topo.services.setdefault((ns, sname), unit)
            if sname != unit_name:
                topo.aliases[unit].add(sname)

    for ns, entries in sorted(by_ns.items()):
        for sname, sobj, origin in entries:
            if (ns, sname) in claimed:
                continue
            spec: Mapping[str, Any] = sobj["spec"] if isinstance(sobj.get("spec"), dict) else {}
            if spec.get("type") == "ExternalName":
                unit = Unit("ExternalApi", sname)
                host = spec.get("externalName")
                topo.props.setdefault(unit, {"namespace": ns})
                if isinstance(host, str) and host:
                    topo.props[unit]["external_name"] = host
                topo.origins.setdefault(unit, origin)
                topo.services[(ns, sname)] = unit
                continue
            explicit_ds = steer(sobj, "datastore")
            if explicit_ds is not None:
                system = None if explicit_ds.lower() in {"false", "no", "0"} else explicit_ds
            else:
                system = next((PORT_SYSTEMS[p] for p in _service_ports(sobj) if p in PORT_SYSTEMS),
                              None)  # fmt: skip
            unit = Unit("Datastore" if system else "Service", steer(sobj, "service") or sname)
            topo.services[(ns, sname)] = unit
            _merge_props(topo, unit, ns, origin, system, [sobj])
    return topo


def _merge_props(
    topo: Topology, unit: Unit, ns: str, origin: str, system: str | None, sources: list[Obj]
) -> None:
    props = topo.props.setdefault(unit, {"namespace": ns})
    topo.origins.setdefault(unit, origin)
    if system and system != "unknown":
        props.setdefault("db_system", system)
    for src in sources:
        for key in ("owner", "criticality"):
            value = steer(src, key)
            if value and key not in props:
                props[key] = value


def build(objects: Sequence[Obj], origins: Sequence[str] | None = None) -> RecordBatch:
    """Pure: parsed Kubernetes objects to topology records. Bad objects become problems."""
    origins = list(origins) if origins is not None else [f"object {i}" for i in range(len(objects))]
    if len(origins) != len(objects):
        raise ValueError("objects and origins differ in length")
    idx = _index(objects, origins, INFRA_KINDS)
    out = RecordBatch(problems=list(idx.problems))
    topo = resolve_units(idx)

    namespaces: dict[str, str] = {}
    for (kind, ns, name), (_, origin) in idx.objs.items():
        if kind == "Namespace":
            namespaces.setdefault(name, origin)
        elif kind != "Node":
            namespaces.setdefault(ns, origin)
    ns_objs = {name: o for (kind, _, name), (o, _) in idx.objs.items() if kind == "Namespace"}
    for ns in sorted(namespaces):
        props: dict[str, Any] = {}
        env = ns_objs.get(ns) and (steer(ns_objs[ns], "environment") or
                                   labels(ns_objs[ns]).get("environment"))  # fmt: skip
        if env:
            props["environment"] = env
        out.nodes.append(NodeRecord("Namespace", {"name": ns}, props, SRC, origin=namespaces[ns]))

    _units(topo, out)
    _workloads(idx, topo, out)
    _routes(idx, topo, out)
    _placement(idx, out)
    return out


def _ns_ref(ns: str) -> Any:
    return NodeRecord("Namespace", {"name": ns}).ref


def _units(topo: Topology, out: RecordBatch) -> None:
    for unit in sorted(topo.props, key=lambda u: (u.label, u.name)):
        props = dict(topo.props[unit])
        origin = topo.origins.get(unit, "")
        crit = props.get("criticality")
        if crit is not None and crit not in CRITICALITY:
            msg = f"{crit!r} is not one of {list(CRITICALITY)}; ignored"
            out.problems.append(Rejection(str(unit.ref), "stackgraph.io/criticality", msg, origin))
            del props["criticality"]
        if unit.label == "ExternalApi":
            props.pop("criticality", None)
        if topo.aliases.get(unit):
            props["aliases"] = sorted(topo.aliases[unit])
        out.nodes.append(NodeRecord(unit.label, {"name": unit.name}, props, SRC, origin=origin))
        if unit.label != "ExternalApi":
            out.edges.append(
                EdgeRecord("IN_NAMESPACE", unit.ref, _ns_ref(props["namespace"]), {}, SRC,
                           origin=origin)
            )  # fmt: skip


def _workloads(idx: _Indexed, topo: Topology, out: RecordBatch) -> None:
    for (kind, ns, name), (obj, origin) in sorted(idx.objs.items()):
        if kind not in WORKLOAD_KINDS:
            continue
        unit = topo.workloads[(kind, ns, name)]
        props: dict[str, Any] = {"workload_kind": kind, "unit": unit.name}
        main = main_container(obj)
        if main is not None and main.get("image"):
            props["image"] = str(main["image"])
        imgs = images(obj)
        if imgs:
            props["images"] = imgs
        replicas = dig(obj, "spec", "replicas")
        if kind != "DaemonSet":
            props["replicas"] = replicas if isinstance(replicas, int) else 1
        ref = NodeRecord("Deployment", {"namespace": ns, "name": name}).ref
        out.nodes.append(NodeRecord("Deployment", ref.key, props, SRC, origin=origin))
        out.edges.append(EdgeRecord("IN_NAMESPACE", ref, _ns_ref(ns), {}, SRC, origin=origin))
        out.edges.append(EdgeRecord("DEPLOYED_AS", unit.ref, ref, {}, SRC, origin=origin))


def _routes(idx: _Indexed, topo: Topology, out: RecordBatch) -> None:
    for (kind, ns, name), (obj, origin) in sorted(idx.objs.items()):
        if kind not in ROUTE_KINDS:
            continue
        for row in routes_of(obj):
            unit = topo.services.get((row.namespace, row.service))
            if unit is None:
                unit = Unit("Service", row.service)
                if unit not in topo.props:
                    # the route names a Service the snapshot does not hold: still a service
                    topo.props[unit] = {"namespace": row.namespace}
                    out.nodes.append(
                        NodeRecord(
                            "Service",
                            {"name": unit.name},
                            {"namespace": row.namespace},
                            SRC,
                            origin=origin,
                        )
                    )
            if unit.label != "Service":
                msg = f"routes to {unit.label} {unit.name!r}, not a service; edge skipped"
                out.problems.append(Rejection(f"{kind} {ns}/{name}", "backend", msg, origin))
                continue
            props: dict[str, Any] = {"route_kind": kind, "source_object": f"{ns}/{name}",
                                     "namespace": ns, "tls": row.tls}  # fmt: skip
            if row.entrypoints:
                props["entrypoints"] = list(row.entrypoints)
            ref = NodeRecord("Route", {"host": row.host, "path": row.path}).ref
            out.nodes.append(NodeRecord("Route", ref.key, props, SRC, origin=origin))
            out.edges.append(EdgeRecord("IN_NAMESPACE", ref, _ns_ref(ns), {}, SRC, origin=origin))
            out.edges.append(EdgeRecord("ROUTES_TO", ref, unit.ref, {}, SRC, origin=origin))


def _node_role(obj: Obj) -> str:
    roles = sorted(
        k.split("/", 1)[1] for k in labels(obj) if k.startswith("node-role.kubernetes.io/")
    )
    if any(r in ("control-plane", "master") for r in roles):
        return "control-plane"
    return roles[0] if roles and roles[0] else "worker"


def _owner_workload(pod: Obj, idx: _Indexed, ns: str) -> tuple[str, str] | None:
    for ref in as_list(meta(pod).get("ownerReferences")):
        kind, name = dig(ref, "kind"), dig(ref, "name")
        if not isinstance(name, str):
            continue
        if kind in ("StatefulSet", "DaemonSet"):
            return kind, name
        if kind == "ReplicaSet":
            rs = idx.objs.get(("ReplicaSet", ns, name))
            if rs is not None:
                for owner in as_list(meta(rs[0]).get("ownerReferences")):
                    if dig(owner, "kind") == "Deployment" and isinstance(dig(owner, "name"), str):
                        return "Deployment", dig(owner, "name")
            suffix = "-" + labels(pod).get("pod-template-hash", "\0")
            if name.endswith(suffix):
                return "Deployment", name[: -len(suffix)]
    return None


def _placement(idx: _Indexed, out: RecordBatch) -> None:
    for (kind, _, name), (obj, origin) in sorted(idx.objs.items()):
        if kind == "Node":
            props: dict[str, Any] = {"role": _node_role(obj)}
            zone = labels(obj).get("topology.kubernetes.io/zone")
            if zone:
                props["zone"] = zone
            out.nodes.append(NodeRecord("Node", {"name": name}, props, SRC, origin=origin))
    pods: dict[tuple[str, str, str], int] = defaultdict(int)
    where: dict[tuple[str, str, str], str] = {}
    for (kind, ns, _), (obj, origin) in idx.objs.items():
        if kind != "Pod" or dig(obj, "status", "phase") not in ("Running", "Pending", None):
            continue
        node = dig(obj, "spec", "nodeName")
        owner = _owner_workload(obj, idx, ns)
        if not isinstance(node, str) or owner is None or (owner[0], ns, owner[1]) not in idx.objs:
            continue
        if ("Node", "", node) not in idx.objs:
            continue
        key = (ns, owner[1], node)
        pods[key] += 1
        where.setdefault(key, origin)
    for (ns, workload, node), n in sorted(pods.items()):
        src = NodeRecord("Deployment", {"namespace": ns, "name": workload}).ref
        dst = NodeRecord("Node", {"name": node}).ref
        origin = where[(ns, workload, node)]
        out.edges.append(EdgeRecord("RUNS_ON", src, dst, {"pods": n}, SRC, origin=origin))


def snapshot_for(inputs: LaneInputs, flux: bool = False) -> Snapshot:
    """The manifests directory when given, else the live cluster (one-line error if none)."""
    if inputs.manifests is not None:
        return load_manifests(inputs.manifests)
    from .k8s_live import kube_api_client, load_live

    return load_live(kube_api_client(), flux=flux)


@register("infra", "Kubernetes topology: namespaces, workloads, services, datastores, routes")
def collect(inputs: LaneInputs) -> RecordBatch:
    snap = snapshot_for(inputs)
    if not snap.objects and not snap.problems:
        raise InputError(f"no Kubernetes objects found in {inputs.manifests or 'the cluster'}")
    batch = build(snap.objects, snap.origins)
    batch.problems[:0] = snap.problems
    return batch
