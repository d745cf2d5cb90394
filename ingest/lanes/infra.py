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

from collections.abc import Sequence

from stackgraph.errors import InputError
from stackgraph.schema import RecordBatch

from .infra_records import add_namespaces, add_placement, add_routes, add_units, add_workloads
from .k8s_index import index_objects
from .k8s_kinds import INFRA_KINDS
from .k8s_objects import Obj, Snapshot, load_manifests
from .registry import LaneInputs, register
from .units import resolve_units

__all__ = ["build", "collect"]


def build(objects: Sequence[Obj], origins: Sequence[str] | None = None) -> RecordBatch:
    """Pure: parsed Kubernetes objects to topology records. Bad objects become problems."""
    origins = list(origins) if origins is not None else [f"object {i}" for i in range(len(objects))]
    if len(origins) != len(objects):
        raise ValueError("objects and origins differ in length")
    idx = index_objects(objects, origins, INFRA_KINDS)
    out = RecordBatch(problems=list(idx.problems))
    topo = resolve_units(idx)

    add_namespaces(idx, out)
    add_units(topo, out)
    add_workloads(idx, topo, out)
    add_routes(idx, topo, out)
    add_placement(idx, out)
    return out


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
