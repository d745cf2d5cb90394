"""The change lane on real Git repositories made here, plus Flux status as documented YAML."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from stackgraph.cli.app import run_ingest
from stackgraph.config import Settings
from stackgraph.dump import export_lines
from stackgraph.ingest import GraphIngestor
from stackgraph.ingest.lanes.flux import commit_ref
from stackgraph.schema import NodeRecord, RecordBatch, Source
from stackgraph.store import GraphStore

CATALOG = Path(__file__).resolve().parents[2] / "examples" / "platform" / "catalog.yaml"


def _commit(repo: git.Repo, files: dict[str, str], message: str, when: int) -> str:
    root = Path(repo.working_tree_dir or ".")
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
        repo.index.add([rel])
    date = f"{when} +0000"
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    with repo.git.custom_environment(**env):
        repo.git.commit("-m", message)
    return repo.head.commit.hexsha


@pytest.fixture
def shop_repo(tmp_path: Path) -> tuple[git.Repo, dict[str, str]]:
    path = tmp_path / "shop"
    repo = git.Repo.init(path, initial_branch="main")
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "Ada Dev")
        cw.set_value("user", "email", "ada@example.com")
    shas = {}
    shas["init"] = _commit(repo, {
        "services/cart/app.py": "def get_cart():\n    return []\n",
        "services/checkout/main.py": "def checkout():\n    pass\n",
        "frontend/index.js": "console.log('hi')\n",
        "README.md": "# shop\n",
    }, "Initial import", 1_767_000_000)  # fmt: skip
    repo.git.checkout("-b", "fix-cart")
    shas["branch"] = _commit(repo, {"services/cart/app.py": "def get_cart():\n    return [1]\n"},
                             "cart: return items", 1_767_100_000)  # fmt: skip
    repo.git.checkout("main")
    date = "1767200000 +0000"
    with repo.git.custom_environment(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date):
        repo.git.merge("--no-ff", "fix-cart", "-m",
                       "Merge pull request #12 from acme/fix-cart")  # fmt: skip
    shas["merge"] = repo.head.commit.hexsha
    shas["squash"] = _commit(repo, {"services/checkout/main.py": "def checkout():\n    retry()\n"},
                             "checkout: retry payment (#15)", 1_767_300_000)  # fmt: skip
    return repo, shas


def _changes(store: GraphStore) -> dict[str, dict[str, object]]:
    import json

    out = {}
    for line in export_lines(store):
        rec = json.loads(line)
        if rec.get("label") == "Change":
            out[rec["key"]["commit_sha"]] = rec["props"]
    return out


def _edges(store: GraphStore, etype: str) -> set[tuple[str, str]]:
    import json

    out = set()
    for line in export_lines(store):
        rec = json.loads(line)
        if rec.get("type") == etype:
            src = rec["src"].get("commit_sha") or rec["src"].get("service")
            dst = rec["dst"].get("name") or rec["dst"].get("path") or rec["dst"].get("commit_sha")
            out.add((src, dst))
    return out


def test_commits_become_changes_with_prs_services_and_a_watermark(
    settings: Settings, store: GraphStore, shop_repo: tuple[git.Repo, dict[str, str]]
) -> None:
    repo, shas = shop_repo
    path = Path(repo.working_tree_dir or ".")
    run_ingest(settings, "catalog", catalog=CATALOG, store=store)
    # a CodeUnit as the code lane writes it: changes to that file link to it
    with GraphIngestor(store) as writer:
        unit = NodeRecord("CodeUnit", {"repo": "shop", "path": "services/cart/app.py"},
                          {"language": "python"}, Source.STATIC_CODE)  # fmt: skip
        writer.write(RecordBatch(nodes=[unit]))

    report = run_ingest(settings, "change", repos=(path,), store=store)
    assert not report.rejected, [str(r) for r in report.rejected]
    changes = _changes(store)
    assert set(changes) == set(shas.values())
    merge, squash, init = changes[shas["merge"]], changes[shas["squash"]], changes[shas["init"]]
    assert merge["pr_number"] == 12 and merge["merge"] is True
    assert merge["files"] == ["services/cart/app.py"]  # its diff against the first parent
    assert squash["pr_number"] == 15 and squash["summary"] == "checkout: retry payment (#15)"
    assert squash["committed_at"] == 1_767_300_000 and squash["author"] == "Ada Dev"
    assert "pr_number" not in init
    assert init["services"] == ["cart", "checkout", "frontend"]
    changed = _edges(store, "CHANGED")
    assert (shas["merge"], "cart") in changed and (shas["squash"], "checkout") in changed
    assert (shas["branch"], "services/cart/app.py") in changed
    assert (shas["squash"], "services/checkout/main.py") not in changed  # no such CodeUnit

    # nothing new: only the clocks move
    before = export_lines(store)
    again = run_ingest(settings, "change", repos=(path,), store=store)
    assert "Change" not in again.nodes and again.nodes["Repository"].unchanged == 1
    assert export_lines(store) == before

    # one new commit: only it is read
    new = _commit(repo, {"frontend/index.js": "console.log('bye')\n"}, "frontend: bye (#16)",
                  1_767_400_000)  # fmt: skip
    third = run_ingest(settings, "change", repos=(path,), store=store)
    assert third.nodes["Change"].created == 1 and third.nodes["Change"].updated == 0
    assert third.nodes["Repository"].updated == 1
    assert (new, "frontend") in _edges(store, "CHANGED")


HELM_AND_KUSTOMIZATION = """
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {{name: checkout, namespace: shop}}
spec:
  interval: 10m
  chart:
    spec:
      chart: ./charts/checkout
      reconcileStrategy: Revision
      sourceRef: {{kind: GitRepository, name: shop, namespace: flux-system}}
status:
  lastAttemptedRevision: 2.3.0+{squash12}
  history:
    - name: checkout
      namespace: shop
      version: 2
      status: deployed
      chartName: checkout
      chartVersion: 2.3.0+{squash12}
      configDigest: sha256:c2
      digest: sha256:d2
      firstDeployed: "2026-01-01T00:00:00Z"
      lastDeployed: "2026-01-02T08:00:00Z"
    - name: checkout
      namespace: shop
      version: 1
      status: superseded
      chartName: checkout
      chartVersion: 2.2.0
      configDigest: sha256:c1
      digest: sha256:d1
      firstDeployed: "2026-01-01T00:00:00Z"
      lastDeployed: "2026-01-01T00:00:00Z"
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: apps, namespace: flux-system}}
spec:
  interval: 10m
  path: ./deploy
  prune: true
  sourceRef: {{kind: GitRepository, name: shop}}
status:
  lastAppliedRevision: main@sha1:{merge}
  lastAttemptedRevision: main@sha1:{merge}
  inventory:
    entries:
      - {{id: shop_cart_apps_Deployment, v: v1}}
      - {{id: shop_cart__Service, v: v1}}
  history:
    - digest: sha256:k2
      firstReconciled: "2026-01-01T12:00:00Z"
      lastReconciled: "2026-01-03T12:00:00Z"
      lastReconciledDuration: 2.1s
      lastReconciledStatus: ReconciliationSucceeded
      totalReconciliations: 40
      metadata: {{revision: "main@sha1:{merge}"}}
"""


def test_flux_status_links_deploys_to_changes(
    settings: Settings, store: GraphStore, shop_repo: tuple[git.Repo, dict[str, str]],
    tmp_path: Path,
) -> None:  # fmt: skip
    repo, shas = shop_repo
    path = Path(repo.working_tree_dir or ".")
    flux = tmp_path / "flux"
    flux.mkdir()
    (flux / "status.yaml").write_text(
        HELM_AND_KUSTOMIZATION.format(squash12=shas["squash"][:12], merge=shas["merge"])
    )
    run_ingest(settings, "catalog", catalog=CATALOG, store=store)
    report = run_ingest(settings, "change", repos=(path,), manifests=flux, store=store)
    assert not report.rejected, [str(r) for r in report.rejected]
    assert report.nodes["Deploy"].created == 3
    deployed = _edges(store, "DEPLOYED")
    assert deployed == {("checkout", "checkout"), ("cart", "cart")}
    links = _edges(store, "CHANGED")
    assert ("checkout", shas["squash"]) in links  # chart version 2.3.0+<sha>
    assert ("cart", shas["merge"]) in links  # Kustomization main@sha1:<sha>
    # a re-run reads no commits (watermark) yet still links the Deploys through the graph
    before = export_lines(store)
    again = run_ingest(settings, "change", repos=(path,), manifests=flux, store=store)
    assert not again.rejected and again.nodes["Deploy"].unchanged == 3
    assert export_lines(store) == before


def test_change_lane_alone_needs_a_source(settings: Settings, store: GraphStore,
                                          monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:  # fmt: skip
    from stackgraph.errors import InputError

    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(InputError, match="no Kubernetes cluster configured"):
        run_ingest(settings, "change", store=store)
    with pytest.raises(InputError, match="is not a Git repository"):
        run_ingest(settings, "change", repos=(tmp_path,), store=store)


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ("main@sha1:" + "a" * 40, "a" * 40),
        ("1.2.0+3f2a1bc9d0e1", "3f2a1bc9d0e1"),
        ("6.5.0@sha256:" + "b" * 64, None),
        ("1.2.0", None),
        ("3f2a1bc", "3f2a1bc"),
        ("1234567", None),
    ],
)
def test_commit_ref(text: str, ref: str | None) -> None:
    assert commit_ref(text) == ref
