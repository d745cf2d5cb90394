"""The infra lane on the real shared manifests and on small hand-written ones."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from sgtest import REPO, drop, require, run_cli

from stackgraph.config import Settings
from stackgraph.dump import export_lines, stats
from stackgraph.ingest import GraphIngestor
from stackgraph.ingest.lanes.infra import build
from stackgraph.ingest.lanes.k8s_objects import Snapshot, load_manifests
from stackgraph.ingest.lanes.routes import parse_match
from stackgraph.schema import RecordBatch
from stackgraph.store import GraphStore

DATASETS = Path(os.environ.get("STACKGRAPH_DATASETS") or REPO.parent / "shared" / "datasets")
MANIFESTS = DATASETS / "manifests"

OB_APPS = {
    "adservice", "cartservice", "checkoutservice", "currencyservice", "emailservice",
    "frontend", "loadgenerator", "paymentservice", "productcatalogservice",
    "recommendationservice", "shippingservice",
}  # fmt: skip
SOCK_APPS = {"carts", "catalogue", "front-end", "orders", "payment", "queue-master",
             "shipping", "user"}  # fmt: skip
SOCK_DBS = {"carts-db": "mongodb", "catalogue-db": "mysql", "orders-db": "mongodb",
            "rabbitmq": "rabbitmq", "session-db": "redis", "user-db": "mongodb"}  # fmt: skip


def _names(batch: RecordBatch, label: str) -> dict[str, dict[str, object]]:
    return {n.key["name"]: dict(n.props) for n in batch.nodes if n.label == label}


def _snapshot(*paths: Path) -> Snapshot:
    require(MANIFESTS.is_dir(), f"shared manifests at {MANIFESTS}")
    snap = Snapshot()
    for p in paths:
        snap.extend(load_manifests(p))
    return snap


def _write_twice(settings: Settings, batch: RecordBatch) -> dict[str, dict[str, int]]:
    with GraphStore.open(settings) as store:
        try:
            with GraphIngestor(store) as writer:
                first = writer.write(batch)
                assert not first.rejected, [str(r) for r in first.rejected]
                once = export_lines(store)
                second = writer.write(batch)
            assert export_lines(store) == once
            assert all(c.created == 0 and c.updated == 0 for c in second.nodes.values())
            assert all(c.created == 0 and c.updated == 0 for c in second.edges.values())
            return stats(store)
        finally:
            drop(store)


def test_online_boutique_nezha(settings: Settings) -> None:
    snap = _snapshot(MANIFESTS / "online-boutique" / "nezha-augmented")
    batch = build(snap.objects, snap.origins)
    assert not snap.problems and not batch.problems
    assert set(_names(batch, "Service")) == OB_APPS
    dbs = _names(batch, "Datastore")
    assert {k: v["db_system"] for k, v in dbs.items()} == {"mysql": "mysql", "redis-cart": "redis"}
    assert set(_names(batch, "Namespace")) == {"hipster"}
    # frontend-external selects the same pods: an alias of `frontend`, not a second service
    assert _names(batch, "Service")["frontend"]["aliases"] == ["frontend-external"]
    counts = _write_twice(settings, batch)
    assert counts["nodes"] == {"Datastore": 2, "Deployment": 13, "Namespace": 1, "Service": 11}
    assert counts["edges"]["DEPLOYED_AS"] == 13


def test_online_boutique_upstream() -> None:
    snap = _snapshot(MANIFESTS / "online-boutique" / "upstream-googlecloudplatform")
    batch = build(snap.objects, snap.origins)
    assert not batch.problems  # ServiceAccounts are passed over, not reported
    assert set(_names(batch, "Service")) == OB_APPS
    assert set(_names(batch, "Datastore")) == {"redis-cart"}
    assert set(_names(batch, "Namespace")) == {"default"}


def test_sock_shop(settings: Settings) -> None:
    snap = _snapshot(MANIFESTS / "sock-shop")
    batch = build(snap.objects, snap.origins)
    assert not batch.problems
    assert set(_names(batch, "Service")) == SOCK_APPS
    dbs = _names(batch, "Datastore")
    assert {k: v["db_system"] for k, v in dbs.items()} == SOCK_DBS
    assert set(_names(batch, "Namespace")) == {"sock-shop"}
    counts = _write_twice(settings, batch)
    assert counts["nodes"]["Deployment"] == 14
    assert counts["edges"]["IN_NAMESPACE"] == 28


def test_train_ticket_nezha(settings: Settings) -> None:
    yamls = MANIFESTS / "train-ticket" / "nezha-augmented" / "yamls"
    # the deploy file is a `.sample` the upstream script applies; named files are read as-is
    snap = _snapshot(yamls / "svc.yaml", yamls / "deploy.yaml.sample")
    batch = build(snap.objects, snap.origins)
    assert not batch.problems
    services = set(_names(batch, "Service"))
    assert len(services) == 47
    assert {"ts-gateway-service", "ts-food-delivery-service", "ts-wait-order-service",
            "ts-station-food-service", "ts-train-food-service"} <= services  # fmt: skip
    assert all(s.startswith("ts-") for s in services)
    assert _names(batch, "Datastore") == {}  # MySQL/Nacos come from Helm charts not copied
    assert set(_names(batch, "Namespace")) == {"default"}
    counts = _write_twice(settings, batch)
    assert counts["nodes"]["Deployment"] == 47 and counts["edges"]["DEPLOYED_AS"] == 47


def test_train_ticket_fudanselab() -> None:
    snap = _snapshot(MANIFESTS / "train-ticket" / "upstream-fudanselab-2021")
    batch = build(snap.objects, snap.origins)
    assert not batch.problems
    services = set(_names(batch, "Service"))
    dbs = _names(batch, "Datastore")
    assert (
        len(services) == 42 and "ts-ui-dashboard" in services and "ts-food-map-service" in services
    )
    assert len(dbs) == 22 and dbs["ts-voucher-mysql"]["db_system"] == "mysql"
    assert all(v["db_system"] == "mongodb" for k, v in dbs.items() if k.endswith("-mongo"))
    assert not services & set(dbs)


def test_train_ticket_directory_with_operator() -> None:
    # the whole directory: svc.yaml + the OpenEBS operator (its CRDs, RBAC, StorageClasses
    # are passed over; its DaemonSets and Deployments are workloads of namespace openebs)
    snap = _snapshot(MANIFESTS / "train-ticket" / "nezha-augmented" / "yamls")
    batch = build(snap.objects, snap.origins)
    assert not batch.problems
    assert set(_names(batch, "Namespace")) == {"default", "openebs"}
    kinds = {n.props["workload_kind"] for n in batch.nodes if n.label == "Deployment"}
    assert kinds == {"Deployment", "DaemonSet"}


SHOP = """
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {environment: staging}}
---
apiVersion: v1
kind: Namespace
metadata: {name: scratch, annotations: {stackgraph.io/ignore: "true"}}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  annotations: {stackgraph.io/criticality: high, stackgraph.io/owner: team-web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web, version: v2}}
    spec:
      containers: [{name: web, image: "ghcr.io/acme/web:1.0"}]
---
apiVersion: v1
kind: Service
metadata: {name: web-svc, namespace: shop}
spec: {selector: {app: web}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: tmp, namespace: scratch}
spec:
  template:
    metadata: {labels: {app: tmp}}
    spec: {containers: [{name: tmp, image: busybox}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: search
  namespace: shop
  labels: {stackgraph.io/datastore: elasticsearch}
spec:
  template:
    metadata: {labels: {app: search}}
    spec: {containers: [{name: s, image: "ghcr.io/acme/custom-search:3"}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: exporter, namespace: shop, annotations: {stackgraph.io/ignore: "true"}}
spec:
  template:
    metadata: {labels: {app: exporter}}
    spec: {containers: [{name: e, image: "oliver006/redis_exporter:v1"}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop, annotations: {stackgraph.io/criticality: urgent}}
spec:
  template:
    metadata: {labels: {app.kubernetes.io/name: api}}
    spec: {containers: [{name: api, image: "ghcr.io/acme/api:2"}]}
---
apiVersion: v1
kind: Service
metadata: {name: payments-gw, namespace: shop}
spec: {type: ExternalName, externalName: api.stripe.com}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop}
spec:
  tls: [{hosts: [shop.example.com]}]
  rules:
    - host: shop.example.com
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: web-svc, port: {number: 80}}}}
          - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
---
apiVersion: traefik.containo.us/v1alpha1
kind: IngressRoute
metadata: {name: admin, namespace: shop}
spec:
  entryPoints: [web]
  routes:
    - match: Host(`admin.example.com`) && PathPrefix(`/v1`, `/v2`)
      kind: Rule
      services: [{name: api, port: 80}]
"""


def test_steering_routes_and_externals(tmp_path: Path) -> None:
    (tmp_path / "shop.yaml").write_text(SHOP)
    snap = load_manifests(tmp_path)
    batch = build(snap.objects, snap.origins)
    services = _names(batch, "Service")
    assert set(services) == {"web-svc", "api"}  # named after the k8s Service, else the label
    assert services["web-svc"] == {"namespace": "shop", "owner": "team-web", "criticality": "high"}
    assert "criticality" not in services["api"]  # "urgent" is refused, the service kept
    [bad] = batch.problems
    assert bad.field == "stackgraph.io/criticality" and "urgent" in bad.message
    assert bad.origin.endswith("shop.yaml#7")
    assert _names(batch, "Datastore") == {"search": {"namespace": "shop",
                                                     "db_system": "elasticsearch"}}  # fmt: skip
    gw = {"namespace": "shop", "external_name": "api.stripe.com"}
    assert _names(batch, "ExternalApi") == {"payments-gw": gw}
    assert set(_names(batch, "Namespace")) == {"shop"}  # scratch is ignored, and its objects
    assert {n.key["name"] for n in batch.nodes if n.label == "Deployment"} == {"web", "search",
                                                                               "api"}  # fmt: skip
    routes = {(e.src.key["host"], e.src.key["path"]): e.dst.key["name"]
              for e in batch.edges if e.type == "ROUTES_TO"}  # fmt: skip
    assert routes == {
        ("shop.example.com", "/"): "web-svc",
        ("shop.example.com", "/api"): "api",
        ("admin.example.com", "/v1"): "api",
        ("admin.example.com", "/v2"): "api",
    }
    tls = {n.key["path"]: n.props["tls"] for n in batch.nodes if n.label == "Route"}
    assert tls["/api"] is True and tls["/v1"] is False


def test_parse_traefik_match() -> None:
    assert parse_match("Host(`a.io`) || Host(`b.io`) && PathPrefix(`/x`)") == (
        ["a.io", "b.io"], ["/x"])  # fmt: skip
    assert parse_match("HostSNI(`*`)") == (["*"], [])
    assert parse_match("Path(`/health`)") == ([], ["/health"])


def _sg(
    *args: str, data: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, data=data, env=env, unset=("KUBECONFIG",), ok=False, timeout=180)


def test_cli_reports_bad_documents_and_ingests_the_rest(tmp_path: Path) -> None:
    mdir = tmp_path / "m"
    mdir.mkdir()
    (mdir / "good.yaml").write_text(SHOP)
    (mdir / "bad.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata: {name: fine, namespace: shop}\n"
        "spec: {selector: {app: fine}}\n---\nkind: [unclosed\n---\n"
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
    )
    data = tmp_path / "data"
    proc = _sg("ingest", "--lanes", "infra", "--manifests", str(mdir), data=data)
    assert proc.returncode == 1, proc.stderr
    err = " ".join(proc.stderr.split())
    assert f"{mdir / 'bad.yaml'}#1" in err and "not valid YAML" in err
    assert f"{mdir / 'bad.yaml'}#2" in err and "unknown kind 'Widget'" in err
    out = json.loads(_sg("graph", "stats", "--json", data=data).stdout)
    assert out["nodes"]["Service"] == 3  # fine, web-svc, api
    assert out["edges"]["ROUTES_TO"] == 4


def test_cli_without_cluster_says_so_in_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    proc = _sg("ingest", "--lanes", "infra", data=tmp_path / "d", env={"HOME": str(home)})
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "no Kubernetes cluster configured" in lines[0]
    assert "--manifests" in lines[0]


@pytest.mark.parametrize("rel", ["sock-shop", "train-ticket/upstream-fudanselab-2021"])
def test_cli_ingests_shared_manifests_rerunnably(tmp_path: Path, rel: str) -> None:
    require(MANIFESTS.is_dir(), f"shared manifests at {MANIFESTS}")
    data = tmp_path / "data"
    proc = _sg("ingest", "--lanes", "infra", "--manifests", str(MANIFESTS / rel), data=data)
    assert proc.returncode == 0, proc.stderr
    first = _sg("graph", "export", data=data).stdout
    assert _sg("ingest", "--lanes", "infra", "--manifests", str(MANIFESTS / rel),
               data=data).returncode == 0  # fmt: skip
    assert _sg("graph", "export", data=data).stdout == first
