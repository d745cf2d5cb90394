"""Workloads and k8s Services resolved to the graph units they are (Service, Datastore,
ExternalApi); the infra lane turns them into records, the change lane names rollouts by them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stackgraph.schema import NodeRecord

from .datastores import PORT_SYSTEMS, recognise
from .k8s_index import Indexed, index_objects
from .k8s_kinds import INFRA_KINDS, WORKLOAD_KINDS
from .k8s_objects import Obj, as_list, dig, labels, name_of, pod_template, steer, str_map
from .selectors import match_selectors

APP_LABELS = ("app.kubernetes.io/name", "app", "name", "k8s-app")


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


def resolve_units(idx: Indexed | None = None, objects: Sequence[Obj] = ()) -> Topology:
    """Map every workload and k8s Service onto the Service/Datastore/ExternalApi it is."""
    if idx is None:
        idx = index_objects(objects, [""] * len(objects), INFRA_KINDS)
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
