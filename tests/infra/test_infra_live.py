"""The infra and change lanes against the real kubernetes client, talking to a local HTTP
server that answers the real list endpoints with real-shaped JSON (no API server runs here)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from kube_apiserver import FakeKube, serve_kube, write_kubeconfig

from stackgraph.config import Settings
from stackgraph.ingest.lanes.flux import rollouts
from stackgraph.ingest.lanes.infra import build
from stackgraph.ingest.lanes.k8s_live import kube_api_client, load_live

T0 = "2026-03-01T10:00:00Z"


def _meta(name: str, ns: str | None = None, **extra: Any) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name, "uid": f"uid-{ns}-{name}", "resourceVersion": "1",
                         "creationTimestamp": T0}  # fmt: skip
    if ns:
        m["namespace"] = ns
    return m | extra


def _deployment(name: str, ns: str, image: str) -> dict[str, Any]:
    return {
        "metadata": _meta(name, ns, annotations={"deployment.kubernetes.io/revision": "2"}),
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": name, "image": image}]}}},
        "status": {"replicas": 2, "readyReplicas": 2},
    }  # fmt: skip


def _rs(dep: str, ns: str, hash_: str, rev: int, image: str, created: str) -> dict[str, Any]:
    return {
        "metadata": _meta(f"{dep}-{hash_}", ns, creationTimestamp=created,
                          annotations={"deployment.kubernetes.io/revision": str(rev)},
                          ownerReferences=[{"apiVersion": "apps/v1", "kind": "Deployment",
                                            "name": dep, "uid": "x", "controller": True}]),
        "spec": {"replicas": 2, "template": {"metadata": {"labels": {"app": dep,
                 "pod-template-hash": hash_}}, "spec": {"containers": [{"name": dep,
                 "image": image}]}}},
    }  # fmt: skip


def _pod(dep: str, ns: str, hash_: str, suffix: str, node: str) -> dict[str, Any]:
    return {
        "metadata": _meta(f"{dep}-{hash_}-{suffix}", ns,
                          labels={"app": dep, "pod-template-hash": hash_},
                          ownerReferences=[{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                            "name": f"{dep}-{hash_}", "uid": "y",
                                            "controller": True}]),
        "spec": {"nodeName": node, "containers": [{"name": dep, "image": "x"}]},
        "status": {"phase": "Running"},
    }  # fmt: skip


def _svc(name: str, ns: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": _meta(name, ns), "spec": {"type": "ClusterIP", **spec}}


def _list(kind: str, api_version: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": kind, "apiVersion": api_version,
            "metadata": {"resourceVersion": "42"}, "items": items}  # fmt: skip


def _cluster() -> dict[str, dict[str, Any]]:
    """Path -> list body, as an API server answers `GET <path>?limit=500`."""
    namespaces = [{"metadata": _meta(n)} for n in ("shop", "kube-system", "flux-system")]
    return {
        "/api/v1/namespaces": _list("NamespaceList", "v1", namespaces),
        "/api/v1/nodes": _list("NodeList", "v1", [
            {"metadata": _meta("cp-1", labels={"node-role.kubernetes.io/control-plane": ""})},
            {"metadata": _meta("worker-1", labels={"topology.kubernetes.io/zone": "eu-1a"})},
            {"metadata": _meta("worker-2")},
        ]),
        "/api/v1/services": _list("ServiceList", "v1", [
            _svc("cart", "shop", selector={"app": "cart"}),
            _svc("cart-cache", "shop", selector={"app": "cart-cache"}),
            _svc("stripe", "shop", type="ExternalName", externalName="api.stripe.com"),
            _svc("kubernetes", "default"),
        ]),
        "/apis/apps/v1/deployments": _list("DeploymentList", "apps/v1", [
            _deployment("cart", "shop", "ghcr.io/acme/cart:2.0.1"),
            _deployment("cart-cache", "shop", "redis:7.2"),
        ]),
        "/apis/apps/v1/statefulsets": _list("StatefulSetList", "apps/v1", []),
        "/apis/apps/v1/daemonsets": _list("DaemonSetList", "apps/v1", []),
        "/apis/apps/v1/replicasets": _list("ReplicaSetList", "apps/v1", [
            _rs("cart", "shop", "5d9f7c", 1, "ghcr.io/acme/cart:2.0.0", "2026-02-20T09:00:00Z"),
            _rs("cart", "shop", "7b8c4d", 2, "ghcr.io/acme/cart:2.0.1", "2026-03-01T10:00:00Z"),
            _rs("cart-cache", "shop", "66aa11", 1, "redis:7.2", "2026-01-01T00:00:00Z"),
        ]),
        "/api/v1/pods": _list("PodList", "v1", [
            _pod("cart", "shop", "7b8c4d", "aaaaa", "worker-1"),
            _pod("cart", "shop", "7b8c4d", "bbbbb", "worker-2"),
            _pod("cart-cache", "shop", "66aa11", "ccccc", "worker-1"),
        ]),
        "/apis/networking.k8s.io/v1/ingresses": _list("IngressList", "networking.k8s.io/v1", [
            {"metadata": _meta("cart", "shop"), "spec": {"rules": [{"host": "cart.example.com",
             "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {
                 "name": "cart", "port": {"number": 80}}}}]}}]}},
        ]),
        "/apis/traefik.io/v1alpha1/ingressroutes": _list("IngressRouteList",
                                                         "traefik.io/v1alpha1", [
            {"apiVersion": "traefik.io/v1alpha1", "kind": "IngressRoute",
             "metadata": _meta("shop", "shop"),
             "spec": {"entryPoints": ["websecure"], "routes": [{"kind": "Rule",
                      "match": "Host(`shop.example.com`) && PathPrefix(`/cart`)",
                      "services": [{"name": "cart", "port": 80}]}]}},
        ]),
        "/apis/traefik.containo.us/v1alpha1/ingressroutes": _list(
            "IngressRouteList", "traefik.containo.us/v1alpha1", [
            {"apiVersion": "traefik.containo.us/v1alpha1", "kind": "IngressRoute",
             "metadata": _meta("legacy", "shop"),
             "spec": {"routes": [{"kind": "Rule", "match": "Host(`old.example.com`)",
                      "services": [{"name": "cart", "port": 80}]}]}},
        ]),
        "/apis/helm.toolkit.fluxcd.io/v2/helmreleases": _list("HelmReleaseList",
                                                              "helm.toolkit.fluxcd.io/v2", [
            {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
             "metadata": _meta("cart", "shop"),
             "spec": {"interval": "10m", "chart": {"spec": {"chart": "cart"}}},
             "status": {"lastAttemptedRevision": "2.0.1", "history": [
                 {"name": "cart", "namespace": "shop", "version": 3, "status": "deployed",
                  "chartName": "cart", "chartVersion": "2.0.1", "appVersion": "2.0.1",
                  "configDigest": "sha256:aa", "digest": "sha256:bb",
                  "firstDeployed": "2026-01-01T00:00:00Z",
                  "lastDeployed": "2026-03-01T10:00:05Z"}]}},
        ]),
    }  # fmt: skip


@pytest.fixture
def kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeKube]:
    with serve_kube(_cluster(), paged=frozenset({"/api/v1/namespaces"})) as fake:
        cfg = write_kubeconfig(tmp_path / "kubeconfig", fake.url)
        monkeypatch.setenv("KUBECONFIG", str(cfg))
        yield fake
    assert all(parse_qs(urlparse(p).query).get("limit") == ["500"] for p in fake.seen)


def test_live_cluster_topology_and_placement(kubeconfig: FakeKube) -> None:
    snap = load_live(kube_api_client())
    assert not snap.problems
    assert sum(1 for p in kubeconfig.seen if p.startswith("/api/v1/namespaces")) == 3  # paged
    batch = build(snap.objects, snap.origins)
    assert not batch.problems
    labels = {(n.label, n.key.get("name")) for n in batch.nodes}
    assert {("Service", "cart"), ("Datastore", "cart-cache"), ("ExternalApi", "stripe"),
            ("Service", "kubernetes"), ("Node", "cp-1")} <= labels  # fmt: skip
    assert {n.key["name"] for n in batch.nodes if n.label == "Namespace"} == {
        "shop", "kube-system", "flux-system", "default"}  # fmt: skip
    roles = {n.key["name"]: n.props for n in batch.nodes if n.label == "Node"}
    assert roles["cp-1"] == {"role": "control-plane"}
    assert roles["worker-1"] == {"role": "worker", "zone": "eu-1a"}
    runs = {(e.src.key["name"], e.dst.key["name"]): e.props["pods"]
            for e in batch.edges if e.type == "RUNS_ON"}  # fmt: skip
    assert runs == {("cart", "worker-1"): 1, ("cart", "worker-2"): 1, ("cart-cache", "worker-1"): 1}
    routes = {(e.src.key["host"], e.src.key["path"], e.dst.key["name"])
              for e in batch.edges if e.type == "ROUTES_TO"}  # fmt: skip
    assert routes == {("cart.example.com", "/", "cart"), ("shop.example.com", "/cart", "cart"),
                      ("old.example.com", "/", "cart")}  # fmt: skip


def test_live_rollouts_from_replicasets_and_helm(kubeconfig: FakeKube) -> None:
    snap = load_live(kube_api_client(), flux=True)
    found = {(r.service, r.digest, r.props["via"]) for r in rollouts(snap.objects, snap.origins)}
    assert found == {
        ("cart", "ghcr.io/acme/cart:2.0.0", "ReplicaSet"),
        ("cart", "ghcr.io/acme/cart:2.0.1", "ReplicaSet"),
        ("cart-cache", "redis:7.2", "ReplicaSet"),
        ("cart", "sha256:bb", "HelmRelease"),
    }
    # the Kustomization and GitRepository CRDs are not installed: 404, skipped quietly
    assert "/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations?limit=500" in kubeconfig.seen


def test_cli_live_ingest(kubeconfig: FakeKube, settings: Settings, tmp_path: Path) -> None:
    from stackgraph.cli.app import run_ingest

    report = run_ingest(settings, "infra,change")
    assert not report.rejected, [str(r) for r in report.rejected]
    assert report.nodes["Deploy"].created == 4
    assert report.edges["RUNS_ON"].created == 3
    assert report.edges["DEPLOYED"].created == 4
    again = run_ingest(settings, "infra,change")
    assert again.nodes["Deploy"].created == 0 and again.nodes["Deploy"].unchanged == 4
