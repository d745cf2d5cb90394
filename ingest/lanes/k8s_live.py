"""Read a live cluster through the official kubernetes client: read-only list calls only.

The raw JSON of each list is kept (`_preload_content=False`), so live objects have the same
shape as `kubectl get -o yaml` dumps and go through the same pure `build` functions.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from stackgraph.errors import InputError
from stackgraph.schema import Rejection

from .k8s_objects import Snapshot, flatten, name_of, namespace_of

_PAGE = 500

# (api class, list method, what) for the built-in kinds
_CORE = (
    ("CoreV1Api", "list_namespace", "namespaces"),
    ("CoreV1Api", "list_service_for_all_namespaces", "services"),
    ("CoreV1Api", "list_node", "nodes"),
    ("CoreV1Api", "list_pod_for_all_namespaces", "pods"),
    ("AppsV1Api", "list_deployment_for_all_namespaces", "deployments"),
    ("AppsV1Api", "list_stateful_set_for_all_namespaces", "statefulsets"),
    ("AppsV1Api", "list_daemon_set_for_all_namespaces", "daemonsets"),
    ("AppsV1Api", "list_replica_set_for_all_namespaces", "replicasets"),
    ("NetworkingV1Api", "list_ingress_for_all_namespaces", "ingresses"),
)
# (group, version, plural, kind) of custom resources; absent CRDs (404) are skipped
TRAEFIK_CRDS = tuple(
    (group, "v1alpha1", plural, kind)
    for group in ("traefik.io", "traefik.containo.us")
    for plural, kind in (("ingressroutes", "IngressRoute"), ("ingressroutetcps", "IngressRouteTCP"))
)
FLUX_CRDS = (
    ("helm.toolkit.fluxcd.io", "v2", "helmreleases", "HelmRelease"),
    ("kustomize.toolkit.fluxcd.io", "v1", "kustomizations", "Kustomization"),
    ("source.toolkit.fluxcd.io", "v1", "gitrepositories", "GitRepository"),
)


def kube_api_client() -> Any:
    """An ApiClient from in-cluster config or kubeconfig; a one-line error when neither."""
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    cfg = client.Configuration()
    try:
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            config.load_incluster_config(client_configuration=cfg)
        else:
            # read $KUBECONFIG now: the client fixes its default path when first imported
            files = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
            path = files[0] if files else os.path.expanduser("~/.kube/config")
            config.load_kube_config(config_file=path, client_configuration=cfg)
    except (ConfigException, OSError, TypeError) as exc:
        raise InputError(
            "no Kubernetes cluster configured (no in-cluster service account, no kubeconfig "
            f"at $KUBECONFIG or ~/.kube/config: {' '.join(str(exc).split())}); "
            "pass --manifests DIR to read manifests instead"
        ) from exc
    cfg.retries = 1
    return client.ApiClient(cfg)


def _pages(call: Callable[..., Any], what: str, host: str) -> list[Any]:
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    out: list[Any] = []
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {"limit": _PAGE, "_preload_content": False}
        if token:
            kwargs["_continue"] = token
        try:
            resp = call(**kwargs)
        except ApiException:
            raise
        except (HTTPError, OSError) as exc:
            raise InputError(f"cannot reach the Kubernetes API at {host} listing {what}: "
                             f"{' '.join(str(exc).split())}") from exc  # fmt: skip
        body = json.loads(resp.data)
        out.append(body)
        token = (body.get("metadata") or {}).get("continue")
        if not token:
            return out


def load_live(api_client: Any, *, infra: bool = True, flux: bool = False) -> Snapshot:
    """List what the lanes read from the cluster. Forbidden lists become problems."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    host = str(getattr(api_client.configuration, "host", "?"))
    snap = Snapshot()
    calls: list[tuple[Callable[..., Any], str, str | None, str]] = []
    if infra:
        for cls, method, what in _CORE:
            api = getattr(client, cls)(api_client)
            calls.append((getattr(api, method), what, None, ""))
    custom = client.CustomObjectsApi(api_client)
    crds = (TRAEFIK_CRDS if infra else ()) + (FLUX_CRDS if flux else ())
    if flux and not infra:
        apps = client.AppsV1Api(api_client)
        calls.append((apps.list_deployment_for_all_namespaces, "deployments", None, ""))
        calls.append((apps.list_replica_set_for_all_namespaces, "replicasets", None, ""))
    for group, version, plural, kind in crds:

        def call(_g: str = group, _v: str = version, _p: str = plural, **kw: Any) -> Any:
            return custom.list_cluster_custom_object(_g, _v, _p, **kw)

        calls.append((call, f"{plural}.{group}", f"{group}/{version}", kind))
    for call, what, api_version, kind in calls:
        try:
            bodies = _pages(call, what, host)
        except ApiException as exc:
            if exc.status == 404 and api_version:
                continue  # the CRD is not installed
            msg = f"list failed: HTTP {exc.status} {exc.reason}"
            snap.problems.append(Rejection(what, "list", msg, f"live {host}"))
            continue
        for body in bodies:
            if api_version and isinstance(body.get("items"), list):
                body = {**body, "kind": f"{kind}List", "apiVersion": api_version}
            for obj in flatten(body):
                if isinstance(obj, dict):
                    origin = f"live {obj.get('kind')} {namespace_of(obj, '')}/{name_of(obj)}"
                    snap.add(obj, origin.replace(" /", " "))
    return snap
