"""The demo repo: the example services with PR-style history, built once and reused."""

from __future__ import annotations

import json
from pathlib import Path

import git
import yaml

from stackgraph.demo.code import pr_merges, prepare_demo_repo
from stackgraph.rca.clock import parse_time

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "platform" / "repo"


def test_demo_repo_has_merged_prs_and_is_reused(tmp_path: Path) -> None:
    dest = prepare_demo_repo(EXAMPLE, tmp_path / "shop")
    repo = git.Repo(dest)
    merges = [c for c in repo.iter_commits("main") if len(c.parents) == 2]
    titles = [c.message.splitlines()[0] for c in merges]
    assert titles == [
        "Merge pull request #17 from shop/payment-timeouts",
        "Merge pull request #14 from shop/recommendations",
        "Merge pull request #12 from shop/add-shipping",
    ]
    diff = repo.git.diff(f"{merges[0].hexsha}^1", merges[0].hexsha)
    assert "-CHARGE_TIMEOUT_S = 2.0" in diff and "+CHARGE_TIMEOUT_S = 10.0" in diff
    # the tree at main is the example source, file for file
    tracked = sorted(repo.git.ls_files().splitlines())
    source = sorted(
        p.relative_to(EXAMPLE).as_posix()
        for p in EXAMPLE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )
    assert tracked == source
    head = repo.head.commit.hexsha
    assert prepare_demo_repo(EXAMPLE, tmp_path / "shop") == dest
    assert git.Repo(dest).head.commit.hexsha == head
    assert not (tmp_path / "shop.tmp").exists() and not (tmp_path / "shop.src").exists()


def test_flux_status_rolls_out_pr_17_just_before_the_alert(tmp_path: Path) -> None:
    """The shas in the example Flux status are the demo repo's: payment's current release
    carries PR #17's merge commit, deployed after the merge and before the alert fires."""
    examples = EXAMPLE.parents[1]
    repo = prepare_demo_repo(EXAMPLE, tmp_path / "shop")
    merges = pr_merges(repo)
    assert sorted(merges) == [12, 14, 17]
    flux = yaml.safe_load((examples / "platform/manifests/flux-status.yaml").read_text())
    payment = next(i for i in flux["items"] if i["metadata"]["name"] == "payment")
    current = payment["status"]["history"][0]
    sha, merged_at = merges[17]
    assert current["chartVersion"].split("+", 1)[1] == sha[:12]
    alert = json.loads((examples / "alerts/checkout-high-error-rate.json").read_text())
    fires = parse_time(alert["alerts"][0]["startsAt"])
    deployed = parse_time(current["lastDeployed"])
    assert fires is not None and deployed is not None
    assert merged_at < deployed < fires <= deployed + 1800


def test_repo_from_an_older_recipe_is_rebuilt(tmp_path: Path) -> None:
    expected = git.Repo(prepare_demo_repo(EXAMPLE, tmp_path / "a")).head.commit.hexsha
    old = tmp_path / "shop"
    (old / "x").mkdir(parents=True)
    (old / "x" / "f.txt").write_text("an older demo\n")
    stale = git.Repo.init(old)
    who = {"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com",
           "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@example.com"}  # fmt: skip
    with stale.git.custom_environment(**who):
        stale.git.add("-A")
        stale.git.commit("-m", "old", "--no-gpg-sign")
    assert prepare_demo_repo(EXAMPLE, old) == old
    assert git.Repo(old).head.commit.hexsha == expected
    assert not (old / "x").exists()
