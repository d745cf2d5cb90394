"""Checks shared by the Helm chart and the plain manifests: schema validation, RBAC,
command lines, pod hardening. Each takes parsed Kubernetes objects."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from typing import Any

import kubernetes_validate as kv
from typer.testing import CliRunner

from stackgraph.cli import app

K8S_VERSIONS = ("1.25", "1.30", kv.latest_version())
READ_VERBS = {"get", "list", "watch"}

# What the infra and change lanes read: (apiGroup, resource). Exactly these, read-only.
LANE_READS = {
    ("", "namespaces"), ("", "nodes"), ("", "pods"), ("", "services"), ("", "events"),
    ("", "pods/log"), ("events.k8s.io", "events"),
    ("apps", "deployments"), ("apps", "statefulsets"), ("apps", "daemonsets"),
    ("apps", "replicasets"), ("networking.k8s.io", "ingresses"),
    ("traefik.io", "ingressroutes"), ("traefik.containo.us", "ingressroutes"),
    ("helm.toolkit.fluxcd.io", "helmreleases"),
    ("kustomize.toolkit.fluxcd.io", "kustomizations"),
    ("source.toolkit.fluxcd.io", "gitrepositories"),
}  # fmt: skip

# Commands the chart runs that are not on this branch yet; the lead re-checks these at merge.
# Every other `stackgraph ...` command line in the chart must pass `--help` here.
# Their options are checked against the documented command line until then.
PENDING_COMMANDS: dict[str, set[str]] = {}
# Routes the chart relies on from `serve`, for the same re-check at merge.
PENDING_ROUTES = ("/healthz", "/readyz", "/metrics", "/api/v1/alerts")

# Custom resources kubernetes-validate has no schema for: checked structurally.
CRD_REQUIRED = {("monitoring.coreos.com/v1", "ServiceMonitor"): ("spec.selector", "spec.endpoints")}


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def one(objects: list[dict[str, Any]], kind: str, name_part: str = "") -> dict[str, Any]:
    found = [o for o in by_kind(objects, kind) if name_part in o["metadata"]["name"]]
    assert len(found) == 1, f"expected one {kind} named *{name_part}*, got {len(found)}"
    return found[0]


def pod_spec(obj: dict[str, Any]) -> dict[str, Any] | None:
    spec = obj.get("spec", {})
    if obj["kind"] == "CronJob":
        return spec["jobTemplate"]["spec"]["template"]["spec"]
    if obj["kind"] in {"Deployment", "StatefulSet", "DaemonSet", "Job"}:
        return spec["template"]["spec"]
    return None


def containers(obj: dict[str, Any], init: bool = True) -> Iterator[dict[str, Any]]:
    spec = pod_spec(obj) or {}
    yield from spec.get("containers", [])
    if init:
        yield from spec.get("initContainers", [])


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def validate_all(objects: list[dict[str, Any]]) -> None:
    """Every object against the Kubernetes OpenAPI schemas (strict), CRDs structurally."""
    assert objects
    for obj in objects:
        key = (obj["apiVersion"], obj["kind"])
        if key in CRD_REQUIRED:
            for path in CRD_REQUIRED[key]:
                node: Any = obj
                for part in path.split("."):
                    assert isinstance(node, dict) and part in node, f"{key[1]}: no {path}"
                    node = node[part]
            continue
        for version in K8S_VERSIONS:
            try:
                kv.validate(obj, version, strict=True)
            except kv.ValidationError as exc:
                where = ".".join(str(p) for p in exc.path)
                raise AssertionError(
                    f"{obj['kind']}/{obj['metadata']['name']} (k8s {version}) {where}: "
                    f"{exc.message}"
                ) from exc


def assert_rbac_read_only(objects: list[dict[str, Any]]) -> None:
    (role,) = by_kind(objects, "ClusterRole")
    granted: set[tuple[str, str]] = set()
    for rule in role["rules"]:
        verbs = set(rule["verbs"])
        assert verbs <= READ_VERBS, f"write verb(s) {verbs - READ_VERBS} in {rule}"
        assert "*" not in rule["resources"] and "*" not in rule.get("apiGroups", [])
        assert not rule.get("nonResourceURLs") and not rule.get("resourceNames")
        granted |= {(g, r) for g in rule["apiGroups"] for r in rule["resources"]}
    assert granted == LANE_READS, (granted - LANE_READS, LANE_READS - granted)
    assert not by_kind(objects, "Role") and not by_kind(objects, "RoleBinding")
    (binding,) = by_kind(objects, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    (sa,) = by_kind(objects, "ServiceAccount")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": sa["metadata"]["name"],
         "namespace": binding["subjects"][0]["namespace"]}
    ]  # fmt: skip


def command_lines(objects: list[dict[str, Any]]) -> list[list[str]]:
    """Every `stackgraph ...` argv the objects run."""
    lines = []
    for obj in objects:
        for c in containers(obj):
            if c.get("command", [None])[0] == "stackgraph":
                lines.append([*c["command"][1:], *c.get("args", [])])
    return lines


def _subcommand(argv: list[str]) -> str:
    """The command path after global options, e.g. `ingest` or `schema apply`."""
    words: list[str] = []
    it = iter(argv)
    for word in it:
        if word in {"--config", "--data-dir", "--graph"}:
            next(it)
        elif word.startswith("-"):
            break
        else:
            words.append(word)
    return " ".join(words)


def assert_real_commands(objects: list[dict[str, Any]]) -> list[str]:
    """Each command line parses with the real CLI (`--help` appended); returns the pending."""
    lines = command_lines(objects)
    assert lines, "no stackgraph command line found"
    pending = []
    runner = CliRunner()
    for argv in lines:
        sub = _subcommand(argv)
        result = runner.invoke(app, [*argv, "--help"])
        if result.exit_code != 0 and sub.split(" ")[0] in PENDING_COMMANDS:
            assert "No such command" in result.output, result.output
            rest = argv[argv.index(sub.split(" ")[0]) + 1 :]
            options = {w for w in rest if w.startswith("-")}
            assert options <= PENDING_COMMANDS[sub], (
                f"{sub}: unknown {options - PENDING_COMMANDS[sub]}"
            )
            pending.append(shlex.join(argv))
            continue
        assert result.exit_code == 0, f"stackgraph {shlex.join(argv)}: {result.output}"
        if "--lanes" in argv:
            lanes = argv[argv.index("--lanes") + 1].split(",")
            assert set(lanes) <= {"catalog", "code", "infra", "change", "telemetry"}, lanes
    return pending


def assert_hardened(objects: list[dict[str, Any]]) -> None:
    """StackGraph's own pods: non-root, read-only root, no privilege escalation, /tmp."""
    for obj in objects:
        spec = pod_spec(obj)
        if spec is None or not any(c.get("command") == ["stackgraph"] for c in containers(obj)):
            continue
        assert spec["securityContext"]["runAsNonRoot"] is True
        assert spec["securityContext"]["runAsUser"] != 0
        volumes = {v["name"]: v for v in spec["volumes"]}
        for c in containers(obj):
            sc = c["securityContext"]
            assert sc["readOnlyRootFilesystem"] is True, c["name"]
            assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"]["drop"] == ["ALL"]
            mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
            assert "emptyDir" in volumes[mounts["/tmp"]], f"{c['name']}: /tmp is not an emptyDir"
        for c in containers(obj, init=False):
            assert c["resources"]["requests"] and c["resources"]["limits"]["memory"]
