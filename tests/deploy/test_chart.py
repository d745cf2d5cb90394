"""The Helm chart, rendered by a real `helm` for the default values and each optional
component, validated against the Kubernetes schemas, with its RBAC, command lines and
config checked against the real CLI and settings."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from chart_support import CHART, ChartError, Render
from deploy_checks import (
    PENDING_COMMANDS,
    PENDING_ROUTES,
    assert_hardened,
    assert_rbac_read_only,
    assert_real_commands,
    by_kind,
    containers,
    env_of,
    one,
    pod_spec,
    validate_all,
)
from sgtest import require

from stackgraph.config import Settings, load_settings
from stackgraph.ingest.lanes.catalog import load_catalog
from stackgraph.scheduler import default_jobs

REPO = CHART.parents[1]
CATALOG = yaml.safe_load((REPO / "examples" / "platform" / "catalog.yaml").read_text())
REPOS = [{"name": "shop", "url": "https://git.example.com/acme/shop.git", "branch": "main"}]

VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "bundled-qdrant": {"qdrant": {"bundled": {"enabled": True}}},
    "service-monitor": {"metrics": {"serviceMonitor": {"enabled": True}}},
    "existing-secret": {"secret": {"existingSecret": "my-stackgraph"}},
    "external-urls": {
        "falkordb": {"url": "redis://falkordb.db.svc:6379"},
        "qdrant": {"url": "http://qdrant.db.svc:6333"},
        "ollama": {"host": "http://ollama.ai.svc:11434"},
        "prometheus": {"url": "http://prometheus.monitoring.svc:9090"},
    },
    "falkordb-url-secret": {"falkordb": {"urlSecret": {"name": "fdb", "key": "url"}}},
    "catalog-and-repos": {
        "catalog": CATALOG,
        "git": {"repos": REPOS, "username": "bot", "password": "s3cret"},
        "prometheus": {"url": "http://prometheus.monitoring.svc:9090"},
    },
    "in-process": {"ingest": {"mode": "inProcess"}, "catalog": CATALOG, "git": {"repos": REPOS}},
    "replicas": {
        "api": {"replicas": 3},
        "falkordb": {"url": "redis://fdb-0.fdb:6379", "readUrl": "redis://fdb-1.fdb:6379"},
    },
}


@pytest.fixture(scope="module")
def rendered(render: Render) -> dict[str, list[dict[str, Any]]]:
    return {name: render(values) for name, values in VARIANTS.items()}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_helm_lint(
    variant: str,
    helm_run: Callable[..., subprocess.CompletedProcess[str]],
    tmp_path: Path,
) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump(VARIANTS[variant]))
    proc = helm_run("lint", "--strict", str(CHART), "--values", str(values))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 chart(s) failed" in proc.stdout


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_object_is_valid_kubernetes(
    variant: str, rendered: dict[str, list[dict[str, Any]]]
) -> None:
    validate_all(rendered[variant])


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_rbac_is_read_only_and_exactly_what_lanes_read(
    variant: str, rendered: dict[str, list[dict[str, Any]]]
) -> None:
    assert_rbac_read_only(rendered[variant])


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_command_lines_are_real_cli_commands(
    variant: str, rendered: dict[str, list[dict[str, Any]]]
) -> None:
    assert assert_real_commands(rendered[variant]) == []
    assert PENDING_COMMANDS == {}


def test_routes_the_chart_relies_on_exist(settings: Settings) -> None:
    from fastapi.testclient import TestClient

    from stackgraph.api import create_app

    with TestClient(create_app(settings, token="t")) as client:
        for route in PENDING_ROUTES:
            # a route that exists answers anything but 404 (401 without the token)
            answer = client.post(route) if route == "/api/v1/alerts" else client.get(route)
            assert answer.status_code != 404, route
        assert client.get("/healthz").status_code == 200
        assert client.get("/metrics").status_code == 200


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_pods_are_hardened(variant: str, rendered: dict[str, list[dict[str, Any]]]) -> None:
    assert_hardened(rendered[variant])


def test_default_install(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objs = rendered["default"]
    fdb = one(objs, "StatefulSet", "falkordb")
    assert fdb["spec"]["template"]["spec"]["containers"][0]["image"].startswith(
        "falkordb/falkordb:"
    )
    (claim,) = fdb["spec"]["volumeClaimTemplates"]
    assert claim["spec"]["resources"]["requests"]["storage"] == "10Gi"
    svc = one(objs, "Service", "falkordb")
    cronjobs = {c["metadata"]["labels"]["stackgraph.io/job"]: c for c in by_kind(objs, "CronJob")}
    assert set(cronjobs) == {"static", "change"}  # telemetry needs prometheus.url
    for cj in cronjobs.values():
        spec = cj["spec"]
        assert spec["concurrencyPolicy"] == "Forbid"
        assert spec["successfulJobsHistoryLimit"] == 1 and spec["failedJobsHistoryLimit"] == 3
        job = spec["jobTemplate"]["spec"]
        assert job["activeDeadlineSeconds"] > 0 and job["backoffLimit"] == 3
        assert job["template"]["spec"]["restartPolicy"] == "Never"
        (c,) = containers(cj)
        assert env_of(c)["FALKORDB_URL"] == f"redis://{svc['metadata']['name']}:6379"
        assert "QDRANT_URL" not in env_of(c) and "PROMETHEUS_URL" not in env_of(c)
    assert cronjobs["static"]["spec"]["schedule"] == "7 * * * *"
    static_args = containers(cronjobs["static"]).__next__()["args"]
    assert static_args[static_args.index("--lanes") + 1] == "infra"
    secret = one(objs, "Secret")
    assert len(base64.b64decode(secret["data"]["api-token"])) == 40
    assert "git-password" not in secret["data"]


def test_api_deployment(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objs = rendered["default"]
    deploy = one(objs, "Deployment")
    (api,) = containers(deploy)
    assert api["args"][2:] == ["serve", "--host", "0.0.0.0", "--port", "8080"]
    assert api["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"
    token = env_of(api)["STACKGRAPH_API_TOKEN"]["secretKeyRef"]
    assert token == {"name": one(objs, "Secret")["metadata"]["name"], "key": "api-token"}
    service = api_service(objs)
    labels = deploy["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert service["spec"]["ports"][0]["targetPort"] == api["ports"][0]["name"]
    assert not by_kind(objs, "ServiceMonitor")


def test_several_replicas_get_a_disruption_budget_and_spread(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    assert not by_kind(rendered["default"], "PodDisruptionBudget")
    objs = rendered["replicas"]
    deploy = one(objs, "Deployment")
    assert deploy["spec"]["replicas"] == 3
    pods = deploy["spec"]["template"]["metadata"]["labels"]
    pdb = one(objs, "PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"].items() <= pods.items()
    assert api_service(objs)["spec"]["selector"].items() <= pods.items()
    (spread,) = deploy["spec"]["template"]["spec"]["topologySpreadConstraints"]
    assert spread["labelSelector"]["matchLabels"].items() <= pods.items()
    env = env_of(next(containers(deploy)))
    assert env["STACKGRAPH_FALKORDB_READ_URL"] == "redis://fdb-1.fdb:6379"
    assert env["FALKORDB_URL"] == "redis://fdb-0.fdb:6379"


def test_service_monitor_selects_the_api_service(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    objs = rendered["service-monitor"]
    sm = one(objs, "ServiceMonitor")
    service = api_service(objs)
    assert sm["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    (endpoint,) = sm["spec"]["endpoints"]
    assert endpoint["path"] == "/metrics"
    assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]}
    assert sm["spec"]["namespaceSelector"]["matchNames"] == ["obs"]


def test_existing_secret_is_used_not_created(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objs = rendered["existing-secret"]
    assert not by_kind(objs, "Secret")
    refs = [
        v["secretKeyRef"]["name"]
        for o in objs
        for c in containers(o)
        for v in env_of(c).values()
        if isinstance(v, dict) and "secretKeyRef" in v
    ]
    assert refs and set(refs) == {"my-stackgraph"}


def test_external_urls_replace_bundled_stores(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objs = rendered["external-urls"]
    assert not by_kind(objs, "StatefulSet")
    expected = {
        "FALKORDB_URL": "redis://falkordb.db.svc:6379",
        "QDRANT_URL": "http://qdrant.db.svc:6333",
        "OLLAMA_HOST": "http://ollama.ai.svc:11434",
        "PROMETHEUS_URL": "http://prometheus.monitoring.svc:9090",
    }
    for obj in [*by_kind(objs, "CronJob"), *by_kind(objs, "Deployment")]:
        (c,) = containers(obj)
        assert expected.items() <= env_of(c).items()
    jobs = {c["metadata"]["labels"]["stackgraph.io/job"]: c for c in by_kind(objs, "CronJob")}
    assert set(jobs) == {"static", "change", "telemetry"}
    assert jobs["telemetry"]["spec"]["schedule"] == "*/2 * * * *"


def test_falkordb_url_from_a_secret(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objs = rendered["falkordb-url-secret"]
    assert not by_kind(objs, "StatefulSet")
    (c,) = containers(one(objs, "Deployment"))
    assert env_of(c)["FALKORDB_URL"] == {"secretKeyRef": {"name": "fdb", "key": "url"}}


def test_bundled_qdrant(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objs = rendered["bundled-qdrant"]
    qdrant = one(objs, "StatefulSet", "qdrant")
    assert qdrant["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "storage"
    service = one(objs, "Service", "qdrant")
    (c,) = containers(one(objs, "Deployment"))
    assert env_of(c)["QDRANT_URL"] == f"http://{service['metadata']['name']}:6333"


def _config_files(objs: list[dict[str, Any]], tmp_path: Path) -> Path:
    """Write the ConfigMap's files where the pods mount them, but under tmp_path."""
    data = one(objs, "ConfigMap")["data"]
    for name, text in data.items():
        (tmp_path / name).write_text(text)
    config = tmp_path / "config.yaml"
    config.write_text(config.read_text().replace("/etc/stackgraph/", f"{tmp_path}/"))
    return config


def test_config_file_loads_with_the_real_settings(
    rendered: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    objs = rendered["catalog-and-repos"]
    settings = load_settings(_config_files(objs, tmp_path), data_dir=tmp_path)
    assert settings.catalog == tmp_path / "catalog.yaml"
    catalog = load_catalog(settings.catalog)
    assert len(catalog.services) == len(CATALOG["services"])
    secret = one(objs, "Secret")["data"]
    assert base64.b64decode(secret["git-password"]) == b"s3cret"
    static = next(
        c
        for c in by_kind(objs, "CronJob")
        if c["metadata"]["labels"]["stackgraph.io/job"] == "static"
    )
    (ingest,) = containers(static, init=False)
    args = ingest["args"]
    assert args[args.index("--lanes") + 1] == "catalog,infra,code"
    assert args[-2:] == ["--repo", "/repos/shop"]
    (clone,) = pod_spec(static)["initContainers"]  # type: ignore[index]
    assert env_of(clone)["REPO_URL_0"] == REPOS[0]["url"]


def test_in_process_mode_schedules_in_the_api_pod(
    rendered: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    objs = rendered["in-process"]
    assert not by_kind(objs, "CronJob")
    deploy = one(objs, "Deployment")
    (api,) = containers(deploy, init=False)
    assert api["args"][-1] == "--schedule"
    settings = load_settings(_config_files(objs, tmp_path), data_dir=tmp_path)
    assert settings.schedule_static_interval_s == 3600
    assert settings.schedule_change_interval_s == 300
    assert settings.schedule_repos == [Path("/repos/shop")]
    assert settings.schedule_static_lanes == "catalog,infra,code"
    assert settings.schedule_telemetry_lanes == ""  # no prometheus.url
    if {"infra", "code", "change"} <= set(_installed_lanes()):
        jobs = {j.name: j for j in default_jobs(settings)}
        assert set(jobs) == {"static", "change"}
    assert pod_spec(deploy)["initContainers"][0]["name"] == "git-clone"  # type: ignore[index]


def api_service(objs: list[dict[str, Any]]) -> dict[str, Any]:
    (svc,) = [
        s for s in by_kind(objs, "Service")
        if s["metadata"]["labels"]["app.kubernetes.io/component"] == "api"
    ]  # fmt: skip
    return svc


def _installed_lanes() -> list[str]:
    from stackgraph.ingest import LANES

    return list(LANES)


def test_clone_init_container_clones_a_real_repo(
    rendered: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    """Run the init container's script with real git against a repo made here."""
    src = tmp_path / "src"
    src.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main", str(src)], check=True)
    (src / "app.py").write_text("print('hi')\n")
    subprocess.run([*git, "-C", str(src), "add", "."], check=True)
    subprocess.run([*git, "-C", str(src), "commit", "-qm", "first"], check=True)
    objs = rendered["catalog-and-repos"]
    (clone,) = pod_spec(one(objs, "CronJob", "static"))["initContainers"]  # type: ignore[index]
    env = {k: v for k, v in env_of(clone).items() if isinstance(v, str)}
    env |= {"REPO_URL_0": src.as_uri(), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    env |= {"GIT_PASSWORD": "tok'en; rm -rf /", "GIT_USERNAME": "bot"}
    script = clone["args"][0].replace("/repos/", f"{tmp_path}/repos/")
    proc = subprocess.run([*clone["command"], script], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "repos" / "shop" / "app.py").read_text() == "print('hi')\n"
    log = subprocess.run(
        ["git", "-C", str(tmp_path / "repos" / "shop"), "log", "--oneline"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "first" in log


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"ingest": {"mode": "sometimes"}}, "/ingest/mode"),
        ({"falkordb": {"url": "http://not-redis:6379"}}, "/falkordb/url"),
        (
            {"git": {"repos": [{"name": "../escape", "url": "https://x/y.git"}]}},
            "/git/repos/0/name",
        ),
        ({"ingest": {"jobs": {"change": {"lanes": "change,nope"}}}}, "/ingest/jobs/change/lanes"),
        ({"api": {"replicas": "two"}}, "/api/replicas"),
        ({"apii": {}}, "apii"),
    ],
)
def test_schema_refuses_bad_values(render: Render, values: dict[str, Any], message: str) -> None:
    with pytest.raises(ChartError, match=message):
        render(values, ok=False)


def test_values_schema_covers_every_default_value() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())

    def walk(node: dict[str, Any], sch: dict[str, Any], where: str) -> None:
        for key, value in node.items():
            props = sch.get("properties", {})
            assert key in props, f"{where}{key} is not in values.schema.json"
            if isinstance(value, dict) and props[key].get("additionalProperties") is False:
                walk(value, props[key], f"{where}{key}.")

    walk(values, schema, "")


def _readme_block(starts_with: str) -> str:
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```(?:yaml|bash)\n(.*?)```", readme, flags=re.S)
    (block,) = [b for b in blocks if b.startswith(starts_with)]
    return block


def test_readme_values_render_valid_objects(render: Render) -> None:
    values = yaml.safe_load(_readme_block("# values.yaml"))
    objs = render(values)
    validate_all(objs)
    assert_real_commands(objs)
    jobs = {c["metadata"]["labels"]["stackgraph.io/job"] for c in by_kind(objs, "CronJob")}
    assert jobs == {"static", "change", "telemetry"}
    assert one(objs, "ServiceMonitor")


def test_notes_print_the_alertmanager_receiver_of_the_readme(
    helm_run: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    proc = helm_run(
        "install", "stackgraph", str(CHART), "--namespace", "stackgraph", "--dry-run=client"
    )
    assert proc.returncode == 0, proc.stderr
    notes = proc.stdout.split("NOTES:", 1)[1]
    snippet = notes[notes.index("route:") : notes.index("3. Check it:")]
    from_notes = yaml.safe_load(snippet)
    assert from_notes == yaml.safe_load(_readme_block("route:"))
    (hook,) = from_notes["receivers"][0]["webhook_configs"]
    assert hook["url"] == "http://stackgraph.stackgraph.svc:8080/api/v1/alerts"
    amtool = shutil.which("amtool")
    require(amtool is not None, "amtool (Debian prometheus-alertmanager)")
    (tmp_path / "token").write_text("x")
    hook["http_config"]["authorization"]["credentials_file"] = str(tmp_path / "token")
    config = {"route": {"receiver": "default", **from_notes["route"]},
              "receivers": [{"name": "default"}, *from_notes["receivers"]]}  # fmt: skip
    (tmp_path / "am.yml").write_text(yaml.safe_dump(config))
    check = subprocess.run(
        [str(amtool), "check-config", str(tmp_path / "am.yml")], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
