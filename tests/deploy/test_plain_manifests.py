"""deploy/base: the chart's defaults as plain manifests. They must equal a fresh render of the
chart, build with the real `kubectl kustomize`, and pass the same checks as the chart."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from deploy_checks import (
    assert_hardened,
    assert_rbac_read_only,
    assert_real_commands,
    by_kind,
    containers,
    env_of,
    validate_all,
)
from sgtest import REPO

BASE = REPO / "deploy" / "base"


def _renderer() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "render_manifests", REPO / "scripts" / "render_manifests.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def built(tools: Path, helm_env: dict[str, str]) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [str(tools / "kubectl"), "kustomize", str(BASE)],
        capture_output=True, text=True, env=helm_env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


def test_plain_manifests_are_the_chart_rendered(tools: Path, monkeypatch: pytest.MonkeyPatch):
    for var in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"):
        monkeypatch.delenv(var, raising=False)
    fresh = _renderer().render(str(tools / "helm"))
    have = {p.name: p.read_text() for p in BASE.glob("*.yaml")}
    stale = sorted(n for n in set(have) | set(fresh) if have.get(n) != fresh.get(n))
    assert not stale, f"deploy/base is stale in {stale}: run scripts/render_manifests.py"


def test_kustomize_build_is_valid_kubernetes(built: list[dict[str, Any]]) -> None:
    validate_all(built)
    kinds = sorted({o["kind"] for o in built})
    assert kinds == sorted(
        ["Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap",
         "Deployment", "Service", "CronJob", "StatefulSet"]
    )  # fmt: skip
    for obj in built:
        if obj["kind"] not in {"Namespace", "ClusterRole", "ClusterRoleBinding"}:
            assert obj["metadata"]["namespace"] == "stackgraph", obj["metadata"]
        assert "helm.sh/chart" not in obj["metadata"].get("labels", {})


def test_kustomize_build_rbac_commands_hardening(built: list[dict[str, Any]]) -> None:
    assert_rbac_read_only(built)
    assert_real_commands(built)
    assert_hardened(built)
    (binding,) = by_kind(built, "ClusterRoleBinding")
    assert binding["subjects"][0]["namespace"] == "stackgraph"


def test_plain_manifests_read_the_secret_users_create(built: list[dict[str, Any]]) -> None:
    """The README's `kubectl create secret generic stackgraph --from-literal=api-token=...`."""
    assert not by_kind(built, "Secret")
    (deploy,) = by_kind(built, "Deployment")
    (api,) = containers(deploy)
    assert env_of(api)["STACKGRAPH_API_TOKEN"] == {
        "secretKeyRef": {"name": "stackgraph", "key": "api-token"}
    }
    readme = (REPO / "README.md").read_text()
    assert "create secret generic stackgraph --from-literal=api-token=" in readme
    assert "kubectl apply -k deploy/base" in readme
