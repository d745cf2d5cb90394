"""The demo's `code` step: the example services as a Git repo with PR history, ingested.

`examples/platform/repo/` is copied into `<data_dir>/demo/shop` as a repository with a
few merged pull requests at fixed times (so the change lane has history to read, and the
Flux status in examples/platform/manifests can name their shas), then the `code` lane runs
on it and a code search shows code → service. A second run reuses the repo.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import git

from stackgraph.cli.app import report_table, run_ingest
from stackgraph.cli.code import hits_table
from stackgraph.memory.code_index import CodeIndex
from stackgraph.memory.code_search import search_code

from .context import DemoContext, print_rejected

_WHO = {"name": "Shop Dev", "email": "dev@shop.example"}

# (branch, files added or restored by it, merge message, (commit time, merge time));
# "" branch = the initial commit. Fixed times (UTC) make the same shas on every machine;
# PR #17 lands shortly before the example alert (examples/alerts, 2026-01-15T10:00:00Z)
# and examples/platform/manifests/flux-status.yaml rolls it out by its merge sha.
_HISTORY: list[tuple[str, list[str], str, tuple[str, str]]] = [
    ("", [], "Initial import of the shop services", ("2026-01-05T09:00:00", "")),
    (
        "add-shipping",
        ["services/shipping"],
        "Merge pull request #12 from shop/add-shipping\n\n"
        "Add the shipping service: carrier quotes, shipments booked on orders.created",
        ("2026-01-07T15:10:00", "2026-01-08T09:30:00"),
    ),
    (
        "recommendations",
        ["services/recommendation"],
        "Merge pull request #14 from shop/recommendations\n\n"
        "Add 'customers also bought' recommendations from the catalog",
        ("2026-01-12T13:00:00", "2026-01-12T16:45:00"),
    ),
    (
        "payment-timeouts",
        ["services/payment/app/main.py", "services/checkout/app/config.py"],
        "Merge pull request #17 from shop/payment-timeouts\n\n"
        "Raise the Stripe charge timeout from 2s to 10s; checkout waits 10s for payment",
        ("2026-01-15T09:14:00", "2026-01-15T09:31:00"),
    ),
]
# what the files looked like before the PR that changed them
_BEFORE = {
    "services/payment/app/main.py": ("CHARGE_TIMEOUT_S = 10.0", "CHARGE_TIMEOUT_S = 2.0"),
    "services/checkout/app/config.py": (
        "payment_timeout_s: float = 10.0",
        "payment_timeout_s: float = 3.0",
    ),
}


def _env(when: str) -> dict[str, str]:
    stamp = f"{when}+00:00"
    return {
        "GIT_AUTHOR_NAME": _WHO["name"], "GIT_AUTHOR_EMAIL": _WHO["email"],
        "GIT_COMMITTER_NAME": _WHO["name"], "GIT_COMMITTER_EMAIL": _WHO["email"],
        "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp,
    }  # fmt: skip


def _copy(src: Path, dst: Path, rel: str) -> None:
    a, b = src / rel, dst / rel
    if a.is_dir():
        shutil.copytree(a, b, dirs_exist_ok=True)
    else:
        b.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(a, b)


def _build(source: Path, tmp: Path) -> None:
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(source, tmp, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    later = [p for _, paths, _, _ in _HISTORY[1:] for p in paths]
    staged = tmp.with_name(tmp.name + ".src")
    shutil.rmtree(staged, ignore_errors=True)
    shutil.copytree(source, staged, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for rel in later:  # the initial commit has neither the later services nor the later edits
        path = tmp / rel
        if rel in _BEFORE:
            old, new = _BEFORE[rel]
            path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
        elif path.is_dir():
            shutil.rmtree(path)
    repo = git.Repo.init(tmp, initial_branch="main")
    with repo.git.custom_environment(**_env(_HISTORY[0][3][0])):
        repo.git.add("-A")
        repo.git.commit("--no-gpg-sign", "--no-verify", "-m", _HISTORY[0][2])
    for branch, paths, message, (committed, merged) in _HISTORY[1:]:
        repo.git.checkout("-b", branch)
        for rel in paths:
            _copy(staged, tmp, rel)
        with repo.git.custom_environment(**_env(committed)):
            repo.git.add("-A")
            title = message.split("\n\n", 1)[1]
            repo.git.commit("--no-gpg-sign", "--no-verify", "-m", title)
        repo.git.checkout("main")
        with repo.git.custom_environment(**_env(merged)):
            repo.git.merge("--no-ff", "--no-gpg-sign", "--no-verify", "-m", message, branch)
    repo.close()
    shutil.rmtree(staged)


def _head(path: Path) -> str | None:
    try:
        with git.Repo(path) as repo:
            return repo.head.commit.hexsha
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, ValueError):
        return None


def _recipe(source: Path) -> str:
    """A digest of everything the demo history is built from: same digest, same shas."""
    h = hashlib.sha256(repr((_HISTORY, _BEFORE, _WHO)).encode())
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        if "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        h.update(path.relative_to(source).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def prepare_demo_repo(source: Path, dest: Path) -> Path:
    """Build the demo repo at `dest` from `source`.

    The history is deterministic (fixed authors and times), so a rebuild yields the same
    shas: a repo built from the same recipe is kept as is (the change lane's watermark
    stays valid); one from an older demo or older example sources is replaced.
    """
    recipe = _recipe(source)
    stamp = dest / ".git" / "stackgraph-demo-recipe"
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == recipe:
        return dest
    tmp = dest.with_name(dest.name + ".tmp")
    _build(source, tmp)
    (tmp / ".git" / stamp.name).write_text(recipe, encoding="utf-8")
    if (dest / ".git").is_dir() and _head(dest) == _head(tmp):
        stamp.write_text(recipe, encoding="utf-8")
        shutil.rmtree(tmp)
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return dest


def pr_merges(repo: Path) -> dict[int, tuple[str, int]]:
    """PR number → (merge sha, committer time) of the demo repo's merged pull requests."""
    out: dict[int, tuple[str, int]] = {}
    with git.Repo(repo) as r:
        for c in r.iter_commits("HEAD", merges=True):
            title = str(c.message).split("\n", 1)[0]
            if title.startswith("Merge pull request #"):
                number = int(title.removeprefix("Merge pull request #").split()[0])
                out[number] = (c.hexsha, int(c.committed_date))
    return out


def ingest_code(ctx: DemoContext) -> None:
    """Demo step: build/reuse the repo, run the code lane, show a code search."""
    source = ctx.examples / "platform" / "repo"
    repo = prepare_demo_repo(source, ctx.settings.data_dir / "demo" / "shop")
    ctx.results["repo"] = repo
    ctx.console.print(f"repo: {repo} ({len(list(git.Repo(repo).iter_commits()))} commits)")
    reports: list[tuple[str, Any]] = []
    report = run_ingest(
        ctx.settings, "code", catalog=ctx.examples / "platform" / "catalog.yaml",
        repos=(repo,), store=ctx.store,
        options={"on_index": lambda name, r: reports.append((name, r))},
    )  # fmt: skip
    ctx.console.print(report_table(report, "ingest: code"))
    print_rejected(ctx, report)
    for name, r in reports:
        ctx.console.print(f"code index ({name}): {r}")
    query = "charge the customer's credit card"
    with CodeIndex.open(ctx.settings) as index:
        hits = search_code(index, ctx.store, query, limit=3)
    ctx.console.print(hits_table(hits, query))
    ctx.console.print(
        f'try: stackgraph code search "{query}" --json; stackgraph code refs checkout'
    )
    ctx.results["code_hits"] = hits
