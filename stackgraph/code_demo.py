"""The demo's `code` step: the example services as a Git repo with PR history, ingested.

`examples/platform/repo/` is copied into `<data_dir>/demo/shop` as a repository with a
few merged pull requests (so the change lane has history to read), then the `code` lane
runs on it and a code search shows code → service. A second run reuses the repo.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import git
from rich.markup import escape

if TYPE_CHECKING:
    from .demo import DemoContext

_WHO = {"name": "Shop Dev", "email": "dev@shop.example"}

# (branch, files added or restored by it, merge message); "" branch = the initial commit
_HISTORY: list[tuple[str, list[str], str]] = [
    ("", [], "Initial import of the shop services"),
    (
        "add-shipping",
        ["services/shipping"],
        "Merge pull request #12 from shop/add-shipping\n\n"
        "Add the shipping service: carrier quotes, shipments booked on orders.created",
    ),
    (
        "recommendations",
        ["services/recommendation"],
        "Merge pull request #14 from shop/recommendations\n\n"
        "Add 'customers also bought' recommendations from the catalog",
    ),
    (
        "payment-timeouts",
        ["services/payment/app/main.py", "services/checkout/app/config.py"],
        "Merge pull request #17 from shop/payment-timeouts\n\n"
        "Raise the Stripe charge timeout from 2s to 10s; checkout waits 10s for payment",
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


def _env(step: int) -> dict[str, str]:
    stamp = f"2025-03-{10 + step:02d}T10:00:00+00:00"  # fixed dates: the same history each time
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


def prepare_demo_repo(source: Path, dest: Path) -> Path:
    """Build the demo repo at `dest` from `source` (kept as is when it already exists)."""
    if (dest / ".git").is_dir():
        return dest
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(source, tmp, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    later = [p for _, paths, _ in _HISTORY[1:] for p in paths]
    staged = tmp.with_name(dest.name + ".src")
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
    with repo.git.custom_environment(**_env(0)):
        repo.git.add("-A")
        repo.git.commit("-m", _HISTORY[0][2])
    for step, (branch, paths, message) in enumerate(_HISTORY[1:], start=1):
        with repo.git.custom_environment(**_env(step)):
            repo.git.checkout("-b", branch)
            for rel in paths:
                _copy(staged, tmp, rel)
            repo.git.add("-A")
            title = message.split("\n\n", 1)[1]
            repo.git.commit("-m", title)
            repo.git.checkout("main")
            repo.git.merge("--no-ff", "-m", message, branch)
    repo.close()
    shutil.rmtree(staged)
    tmp.rename(dest)
    return dest


def demo_code(ctx: DemoContext) -> None:
    """Demo step: build/reuse the repo, run the code lane, show a code search."""
    from stackgraph.memory.code_index import CodeIndex
    from stackgraph.memory.code_search import search_code

    from .cli.app import report_table, run_ingest
    from .cli.code import hits_table

    source = ctx.examples / "platform" / "repo"
    repo = prepare_demo_repo(source, ctx.settings.data_dir / "demo" / "shop")
    ctx.console.print(f"repo: {repo} ({len(list(git.Repo(repo).iter_commits()))} commits)")
    reports: list[tuple[str, Any]] = []
    report = run_ingest(
        ctx.settings, "code", catalog=ctx.examples / "platform" / "catalog.yaml",
        repos=(repo,), store=ctx.store,
        options={"on_index": lambda name, r: reports.append((name, r))},
    )  # fmt: skip
    ctx.console.print(report_table(report, "ingest: code"))
    for problem in report.rejected:
        ctx.console.print(f"[red]rejected[/red] {escape(str(problem))}")
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
