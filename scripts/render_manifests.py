"""Write deploy/base (plain manifests + kustomization) from the Helm chart's defaults.

    .venv/bin/python scripts/render_manifests.py [--check]

The plain manifests are the chart rendered for release `stackgraph` in namespace
`stackgraph`, with the Secret left to the user (`kubectl create secret`) and Helm's own
labels dropped. `--check` exits 1 when deploy/base differs from a fresh render
(tests/deploy runs the same comparison).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
CHART = REPO / "helm" / "stackgraph"
BASE = REPO / "deploy" / "base"
HEADER = "# Generated from helm/stackgraph by scripts/render_manifests.py; do not edit.\n"
RELEASE = NAMESPACE = SECRET = "stackgraph"
FILES = {  # kind -> file, in the order kustomize lists them
    "Namespace": "namespace.yaml",
    "ServiceAccount": "rbac.yaml",
    "ClusterRole": "rbac.yaml",
    "ClusterRoleBinding": "rbac.yaml",
    "ConfigMap": "config.yaml",
    "Deployment": "api.yaml",
    "Service": "api.yaml",
    "CronJob": "ingest.yaml",
    "StatefulSet": "falkordb.yaml",
}
_HELM_LABELS = ("helm.sh/chart", "app.kubernetes.io/managed-by")


def helm_binary() -> str:
    local = REPO / ".tools" / "bin" / "helm"
    return str(local) if local.exists() else "helm"


def _strip(obj: Any) -> Any:
    """Drop Helm's labels and the config checksum annotation, wherever they are."""
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if key in _HELM_LABELS or key == "checksum/config":
                continue
            value = _strip(value)
            if key == "annotations" and not value:
                continue
            out[key] = value
        return out
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def render(helm: str | None = None) -> dict[str, str]:
    """The file name -> text of deploy/base, from the chart."""
    env = dict(os.environ)
    for var, sub in (("HELM_CACHE_HOME", "cache"), ("HELM_CONFIG_HOME", "config"),
                     ("HELM_DATA_HOME", "data")):  # fmt: skip
        env.setdefault(var, str(REPO / ".tools" / "helm" / sub))
    out = subprocess.run(
        [helm or helm_binary(), "template", RELEASE, str(CHART), "--namespace", NAMESPACE,
         "--set", f"secret.existingSecret={SECRET}"],
        check=True, capture_output=True, text=True, env=env,
    ).stdout  # fmt: skip
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    ]
    docs += [_strip(d) for d in yaml.safe_load_all(out) if d]
    files: dict[str, list[str]] = {}
    for doc in docs:
        name = FILES.get(doc["kind"])
        if name is None:
            raise SystemExit(f"no file for kind {doc['kind']}; add it to FILES")
        if doc["kind"] == "Service" and "falkordb" in doc["metadata"]["name"]:
            name = "falkordb.yaml"
        files.setdefault(name, []).append(yaml.safe_dump(doc, sort_keys=False))
    result = {name: HEADER + "---\n".join(parts) for name, parts in files.items()}
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "namespace": NAMESPACE,
        "labels": [{"pairs": {"app.kubernetes.io/part-of": "stackgraph"}}],
        "resources": sorted(result, key=list(dict.fromkeys(FILES.values())).index),
    }
    result["kustomization.yaml"] = HEADER + yaml.safe_dump(kustomization, sort_keys=False)
    return result


def main(argv: list[str]) -> int:
    files = render()
    if "--check" in argv:
        have = {p.name: p.read_text() for p in BASE.glob("*.yaml")} if BASE.exists() else {}
        if have != files:
            stale = sorted(n for n in set(have) | set(files) if have.get(n) != files.get(n))
            print(f"deploy/base is stale ({', '.join(stale)}): run {sys.argv[0]}")
            return 1
        return 0
    BASE.mkdir(parents=True, exist_ok=True)
    for old in BASE.glob("*.yaml"):
        if old.name not in files:
            old.unlink()
    for name, text in files.items():
        (BASE / name).write_text(text)
    print(f"wrote {len(files)} files to {BASE.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
