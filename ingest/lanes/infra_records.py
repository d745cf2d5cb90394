"""The infra lane's records, kind by kind: namespaces, units, workloads, routes, Nodes, and
which workload runs on which Node (`RUNS_ON`, from live Pods)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from stackgraph.schema import CRITICALITY, EdgeRecord, NodeRecord, RecordBatch, Rejection, Source

from .datastores import images
from .k8s_index import Indexed
from .k8s_kinds import WORKLOAD_KINDS
from .k8s_objects import Obj, as_list, dig, labels, main_container, meta, steer
from .routes import ROUTE_KINDS, routes_of
from .units import Topology, Unit

SRC = Source.STATIC_INFRA


def add_namespaces(idx: Indexed, out: RecordBatch) -> None:
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


def _ns_ref(ns: str) -> Any:
    return NodeRecord("Namespace", {"name": ns}).ref


def add_units(topo: Topology, out: RecordBatch) -> None:
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


def add_workloads(idx: Indexed, topo: Topology, out: RecordBatch) -> None:
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


def add_routes(idx: Indexed, topo: Topology, out: RecordBatch) -> None:
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


def _owner_workload(pod: Obj, idx: Indexed, ns: str) -> tuple[str, str] | None:
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


def add_placement(idx: Indexed, out: RecordBatch) -> None:
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
