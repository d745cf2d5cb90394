"""The demo repo: the example services with PR-style history, built once and reused."""

from __future__ import annotations

from pathlib import Path

import git

from stackgraph.code_demo import prepare_demo_repo

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
