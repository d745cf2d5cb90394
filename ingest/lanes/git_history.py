"""Commits of a local Git repository since a watermark, read with one `git log` (gitpython).

    head, commits = read_commits(Path("shop"), since="3f2a...")   # only what is new
    build_changes("shop", head, commits, known_services={"cart"}, code_units=set())

A merge commit lists the files it brought in (its diff against the first parent), so a
merged PR is one Change naming everything it touched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from stackgraph.errors import InputError
from stackgraph.schema import EdgeRecord, NodeRecord, RecordBatch, Source

SRC = Source.GIT
MAX_FILES = 200
"""Files listed on one Change node (a vendoring commit can touch thousands)."""

_PR = (re.compile(r"^Merge pull request #(\d+)\b"), re.compile(r"\(#(\d+)\)\s*$"),
       re.compile(r"^Merge branch .* into .*\(!(\d+)\)"))  # fmt: skip
_RS, _US = "\x1e", "\x1f"


@dataclass(frozen=True)
class Commit:
    sha: str
    author: str
    committed_at: int
    summary: str
    files: tuple[str, ...]
    parents: int

    @property
    def pr_number(self) -> int | None:
        for pattern in _PR:
            m = pattern.search(self.summary)
            if m:
                return int(m.group(1))
        return None


def repo_name(path: Path) -> str:
    """The name a repository goes by on CodeUnit and Change nodes: its folder's name."""
    return path.resolve().name


def read_commits(
    path: Path, since: str | None = None, max_count: int = 10_000
) -> tuple[str | None, list[Commit]]:
    """HEAD's sha and the commits reachable from HEAD but not from `since`, newest first.

    A `since` the repository no longer has (history rewritten, gc'd) reads everything again.
    """
    import git

    try:
        repo = git.Repo(path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise InputError(f"{path} is not a Git repository") from exc
    try:
        head = repo.head.commit.hexsha
    except ValueError:
        return None, []  # no commits yet
    rev = "HEAD"
    if since:
        if since == head:
            return head, []
        try:
            repo.git.cat_file("-e", f"{since}^{{commit}}")
            rev = f"{since}..HEAD"
        except git.GitCommandError:
            rev = "HEAD"
    fmt = f"{_RS}%H{_US}%an{_US}%ct{_US}%P{_US}%s{_US}"
    out = repo.git.log(
        rev, f"--max-count={max_count}", f"--format={fmt}", "--name-only",
        "--diff-merges=first-parent", "--no-renames", "--no-color",
    )  # fmt: skip
    commits: list[Commit] = []
    for record in out.split(_RS)[1:]:
        sha, author, ct, parents, summary, rest = record.split(_US, 5)
        files = tuple(sorted({f for f in rest.splitlines() if f.strip()}))
        commits.append(Commit(sha, author, int(ct), summary.strip(), files, len(parents.split())))
    return head, commits


def services_of(
    files: Iterable[str], known: set[str], service_map: Mapping[str, str] | None = None
) -> list[str]:
    """Services a change touched: a configured path prefix, else `services/<name>/...` or
    `<name>/...` where `<name>` is a known service."""
    found: set[str] = set()
    prefixes = sorted((service_map or {}).items(), key=lambda kv: -len(kv[0]))
    for f in files:
        mapped = next((svc for pre, svc in prefixes if f.startswith(pre.rstrip("/") + "/")
                       or f == pre), None)  # fmt: skip
        if mapped:
            found.add(mapped)
            continue
        parts = PurePosixPath(f).parts
        if len(parts) >= 3 and parts[0] == "services" and parts[1] in known:
            found.add(parts[1])
        elif len(parts) >= 2 and parts[0] in known:
            found.add(parts[0])
    return sorted(found)


def build_changes(
    repo: str,
    head: str | None,
    commits: list[Commit],
    *,
    known_services: set[str],
    code_units: set[str],
    service_map: Mapping[str, str] | None = None,
    branch: str | None = None,
    origin: str = "",
) -> RecordBatch:
    """Pure: commits to Change nodes, CHANGED edges and the repository's new watermark."""
    out = RecordBatch()
    if head is not None:
        props: dict[str, Any] = {"watermark_sha": head}
        if branch:
            props["branch"] = branch
        out.nodes.append(NodeRecord("Repository", {"name": repo}, props, SRC, origin=origin))
    for c in commits:
        where = f"{origin}@{c.sha[:12]}"
        props = {"author": c.author, "committed_at": c.committed_at, "summary": c.summary,
                 "files": list(c.files[:MAX_FILES]), "files_changed": len(c.files),
                 "merge": c.parents > 1}  # fmt: skip
        if c.pr_number is not None:
            props["pr_number"] = c.pr_number
        svcs = services_of(c.files, known_services, service_map)
        if svcs:
            props["services"] = svcs
        key = {"repo": repo, "commit_sha": c.sha}
        out.nodes.append(NodeRecord("Change", key, props, SRC, origin=where))
        me = NodeRecord("Change", key).ref
        for svc in svcs:
            dst = NodeRecord("Service", {"name": svc}).ref
            out.edges.append(EdgeRecord("CHANGED", me, dst, {}, SRC, origin=where))
        for f in c.files:
            if f in code_units:
                dst = NodeRecord("CodeUnit", {"repo": repo, "path": f}).ref
                out.edges.append(EdgeRecord("CHANGED", me, dst, {}, SRC, origin=where))
    return out
