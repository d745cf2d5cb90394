"""Hostile manifests and catalogs (issue 17, rows 3, 4 and 11): reading stays inside the
named folder, YAML is read within caps, and a bad catalog is one clear line while the lanes
after it are still written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackgraph.cli.app import run_ingest
from stackgraph.config import Settings
from stackgraph.dump import stats
from stackgraph.errors import InputError
from stackgraph.ingest.lanes.bounded_yaml import YamlLimits
from stackgraph.ingest.lanes.catalog import load_catalog
from stackgraph.ingest.lanes.k8s_objects import load_manifests
from stackgraph.store import GraphStore

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: shop, labels: {app: %s}}
spec:
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec: {containers: [{name: %s, image: "shop/%s:1"}]}
"""


def _deployment(name: str) -> str:
    return DEPLOYMENT % ((name,) * 6)


def _bomb(width: int, depth: int) -> str:
    """The 767-byte reproducer's shape: each level a list of `width` aliases of the last."""
    lines = ["apiVersion: v1", "kind: List", 'l0: &l0 {kind: ConfigMap, metadata: {name: "x"}}']
    for level in range(1, depth):
        refs = ", ".join([f"*l{level - 1}"] * width)
        lines.append(f"l{level}: &l{level} [{refs}]")
    lines.append("items: [" + ", ".join([f"*l{depth - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def test_no_symlink_out_of_the_folder_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "app.yaml").write_text(_deployment("web"))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "stolen.yaml").write_text(_deployment("stolen"))
    links = {"passwd.yaml": "/etc/passwd", "shadow.yaml": "/etc/shadow",
             "environ.yaml": "/proc/self/environ", "stolen.yaml": str(outside / "stolen.yaml"),
             "dir": str(outside)}  # fmt: skip
    for name, target in links.items():
        (folder / name).symlink_to(target)
    (folder / "inside.yaml").symlink_to(folder / "app.yaml")  # a link inside is fine
    snap = load_manifests(folder)
    assert {o["metadata"]["name"] for o in snap.objects} == {"web"}
    assert len(snap.objects) == 2  # app.yaml and the link to it
    refused = {Path(p.origin).name for p in snap.problems}
    assert refused == {"passwd.yaml", "shadow.yaml", "environ.yaml", "stolen.yaml"}
    assert all(p.message == "is a symlink out of the manifests folder; not read"
               for p in snap.problems)  # fmt: skip


def test_an_alias_bomb_is_refused_with_the_rest_of_the_file_read(tmp_path: Path) -> None:
    manifest = tmp_path / "bomb.yaml"
    manifest.write_text(_bomb(9, 4) + "---\n" + _deployment("web"))
    assert len(_bomb(9, 7)) < 800  # the reproducer's size: 9^7 objects from under 800 bytes
    snap = load_manifests(manifest, YamlLimits(max_alias_nodes=1000))
    assert [o["metadata"]["name"] for o in snap.objects] == ["web"]
    (problem,) = snap.problems
    assert problem.origin == f"{manifest}#0"
    assert problem.message.startswith("not read at line 1: aliases expand it to ")
    assert "(at most 1000 added by aliases)" in problem.message


def test_the_default_caps_refuse_the_full_size_bomb_at_once(tmp_path: Path) -> None:
    manifest = tmp_path / "bomb.yaml"
    manifest.write_text(_bomb(9, 9))
    snap = load_manifests(manifest)
    assert not snap.objects
    assert "aliases expand it to" in snap.problems[0].message


@pytest.mark.parametrize(
    ("text", "limits", "message"),
    [
        ("a: &a [1, *a]\n", YamlLimits(), "an alias refers to a node that contains it"),
        ("kind: ConfigMap\ndata: {k: " + "x" * 200 + "}\n", YamlLimits(max_scalar_chars=100),
         "a value of 200 characters is over the 100-character limit"),
        ("kind: List\nitems: [" + ", ".join(["{kind: ConfigMap}"] * 20) + "]\n",
         YamlLimits(max_objects=10), "holds more than 10 objects; not read"),
        ("kind: List\nitems: [" + ", ".join(["{kind: ConfigMap}"] * 20) + "]\n",
         YamlLimits(max_nodes=30), "has more than 30 nodes"),
        ("---\nkind: A\n" * 6, YamlLimits(max_documents=5),
         "has 6 documents, over the limit of 5; not read"),
    ],
)  # fmt: skip
def test_each_cap_names_the_file(
    tmp_path: Path, text: str, limits: YamlLimits, message: str
) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(text)
    snap = load_manifests(manifest, limits)
    assert not snap.objects
    (problem,) = snap.problems
    assert str(manifest) in problem.origin and message in problem.message


def test_catalog_caps_and_encoding_are_input_errors(tmp_path: Path) -> None:
    cat = tmp_path / "catalog.yaml"
    cat.write_bytes(b"services:\n  - name: a\n    owner: t\xff\n")
    with pytest.raises(InputError, match=r"is not UTF-8 text \(byte 34\)"):
        load_catalog(cat)
    cat.write_text("services:\n  - name: a\n    description: " + "x" * 70_000 + "\n")
    with pytest.raises(InputError, match="70000 characters is over the 65536-character limit"):
        load_catalog(cat)
    cat.write_text(_bomb(9, 7).replace("apiVersion: v1\nkind: List\n", ""))
    with pytest.raises(InputError, match="aliases expand it to"):
        load_catalog(cat)


def test_a_bad_catalog_does_not_stop_the_lanes_after_it(
    tmp_path: Path, settings: Settings, store: GraphStore
) -> None:
    cat = tmp_path / "catalog.yaml"
    cat.write_bytes(b"services:\n  - name: a\n    owner: t\xff\n")
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "app.yaml").write_text(_deployment("web"))
    with pytest.raises(InputError, match="not UTF-8"):
        run_ingest(settings, "catalog,infra", catalog=cat, manifests=folder, store=store)
    assert stats(store)["nodes"].get("Deployment") == 1


def test_the_cli_says_it_in_one_line_and_exits_2(tmp_path: Path) -> None:
    cat = tmp_path / "catalog.yaml"
    cat.write_bytes(b"services:\n  - name: a\n    owner: t\xff\n")
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "app.yaml").write_text(_deployment("web"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKGRAPH_")}
    env["STACKGRAPH_DATA_DIR"] = str(tmp_path / "data")
    env.pop("FALKORDB_URL", None)
    proc = subprocess.run(
        [sys.executable, "-m", "stackgraph", "ingest", "--lanes", "catalog,infra",
         "--catalog", str(cat), "--manifests", str(folder)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    said = " ".join(proc.stderr.split())  # rich wraps long lines
    assert said.startswith(f"lane failed: catalog {cat} is not UTF-8 text (byte 34)"), said
    assert "Traceback" not in proc.stderr
