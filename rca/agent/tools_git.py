"""Git tools on mapped repos: `git_log` (commits just before the alert) and `git_show`.

The repo is chosen by service name from configuration; the model never names a path. Git
runs without a shell, with fixed arguments and a validated commit id.

A change of S supports S only where no service S calls (the graph's `CALLS`) changed in the
same window: a caller fails when what it calls breaks, so a callee's release explains S's
symptoms as well as S's own does. This is the frontier rule the read path and the metrics
and log checks apply (`downstream`), applied to changes: the tie goes to the callee, the
deeper of the two, and the check is inconclusive for S, naming the callees released.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .downstream import callees_to_read
from .evidence import Verdict
from .toolbox import Prerequisite, Tool, ToolContext, ToolResult, ToolStatus, recent, service_param

_SHA = re.compile(r"^[0-9a-f]{7,40}$")
_SEP = "\x1f"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
"""A service name usable as a folder name (no `/`, no pathspec magic)."""


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr else "git failed")
    return done.stdout


def _repo(ctx: ToolContext, service: str) -> Path | None:
    path = ctx.repos.get(service)
    return Path(path) if path else None


def service_path(repo: Path, service: str) -> str:
    """The service's folder in a monorepo, as the change and code lanes infer it:
    `services/<name>/`, else `<name>/` (also with `-` as `_`); "" when the repository
    has neither (a repository of its own: all of it is the service's)."""
    names = list(dict.fromkeys((service, service.replace("-", "_"))))
    if not all(_NAME.match(n) for n in names):
        return ""
    wanted = [f"services/{n}" for n in names] + names
    out = _git(repo, "ls-tree", "-d", "--name-only", "HEAD", "--", *wanted)
    found = set(out.splitlines())
    return next((f"{w}/" for w in wanted if w in found), "")


def _where(repo: Path, path: str) -> str:
    return f"{repo.name}:{path}" if path else repo.name


def callees_released(
    ctx: ToolContext, service: str, repo: Path, now: float
) -> tuple[list[str], list[str]]:
    """The services `service` calls with a commit to their folder in the window before
    `now`, and those whose history could not be read (named, not counted: a neighbour's
    broken checkout is no evidence about the suspect). A callee in the same repository
    without a folder of its own is left out: its commits cannot be told from the suspect's."""
    released: list[str] = []
    unread: list[str] = []
    for callee in callees_to_read(ctx, service):
        theirs = _repo(ctx, callee)
        if theirs is None:
            continue
        try:
            path = service_path(theirs, callee)
            if not path and theirs.resolve() == repo.resolve():
                continue
            found = _git(theirs, "log", "--full-history", "--max-count=1",
                         f"--until=@{int(now)}", f"--since=@{int(now - ctx.window_s)}",
                         "--format=%H", *(["--", path] if path else []))  # fmt: skip
        except (RuntimeError, OSError, subprocess.SubprocessError):
            unread.append(callee)
            continue
        if found.strip():
            released.append(callee)
    return released, unread


def _also_released(names: list[str], unread: list[str]) -> str:
    text = (f"; released in the same window, services it calls: {', '.join(names)} (their "
            "change explains its symptoms as well)") if names else ""  # fmt: skip
    if unread:
        text += f"; the history of {', '.join(unread)}, which it calls, could not be read"
    return text


def _run_log(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    """Commits that touched the service's folder (merges that landed them included, at
    their merge time), so one service is not supported by another's change."""
    service = str(args["service"])
    repo = _repo(ctx, service)
    if repo is None:
        return ToolResult(ToolStatus.UNAVAILABLE, f"no repository is mapped for {service}")
    now = ctx.now()
    path = service_path(repo, service)
    out = _git(
        repo, "log", "--full-history", f"--max-count={int(args.get('limit', 10))}",
        f"--until=@{int(now)}", f"--format=%H{_SEP}%ct{_SEP}%an{_SEP}%s",
        *(["--", path] if path else []),
    )  # fmt: skip
    commits: list[dict[str, Any]] = []
    for line in out.splitlines():
        sha, ts, author, subject = line.split(_SEP, 3)
        commits.append({"sha": sha, "time": float(ts), "author": author, "subject": subject})
    where = _where(repo, path)
    if not commits:
        return ToolResult(ToolStatus.NO_DATA, f"no commits in {where} before the alert")
    fresh = [c for c in commits if recent(c["time"], now, ctx.window_s)]
    text = "; ".join(
        f"{c['sha'][:10]} {int((now - c['time']) // 60)} min before the alert: {c['subject']}"
        for c in commits[:5]
    )
    rivals, unread = callees_released(ctx, service, repo, now) if fresh else ([], [])
    data = {"commits": commits, "recent": fresh, "repo": repo.name, "path": path,
            "callees_released": rivals, "callees_unread": unread,
            "changed_at": max((c["time"] for c in fresh), default=None)}  # fmt: skip
    return ToolResult(
        ToolStatus.SUCCESS,
        f"{len(fresh)} commit(s) to {where} within {int(ctx.window_s // 60)} min of the "
        f"alert; {text}{_also_released(rivals, unread)}",
        data,
    )


def _check_log(result: ToolResult, suspect: str, now: float, window_s: float) -> Verdict:
    ok = result.status == ToolStatus.SUCCESS and bool(result.data.get("recent"))
    ok = ok and not result.data.get("callees_released")
    return Verdict.SUPPORTS if ok else Verdict.INCONCLUSIVE


def _run_show(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    service, sha = str(args["service"]), str(args["sha"]).lower()
    if not _SHA.match(sha):
        return ToolResult(ToolStatus.INVALID_ARGUMENTS, f"{sha!r} is not a commit id")
    repo = _repo(ctx, service)
    if repo is None:
        return ToolResult(ToolStatus.UNAVAILABLE, f"no repository is mapped for {service}")
    path = service_path(repo, service)
    head = _git(repo, "show", "-s", f"--format=%H{_SEP}%ct{_SEP}%s", sha, "--")
    full, ts, subject = head.strip().split(_SEP, 2)
    stat = _git(repo, "show", "--stat", "--diff-merges=first-parent", "--format=", full,
                "--", *([path] if path else []))  # fmt: skip
    data = {"sha": full, "time": float(ts), "subject": subject, "repo": repo.name,
            "path": path, "stat": stat[:4000]}  # fmt: skip
    if not stat.strip():  # a merge's files are those it brought onto its first parent
        return ToolResult(ToolStatus.NO_DATA,
                          f"{full[:10]} {subject}: changes nothing in {_where(repo, path)}",
                          data)  # fmt: skip
    now = ctx.now()
    in_window = recent(float(ts), now, ctx.window_s)
    rivals, unread = callees_released(ctx, service, repo, now) if in_window else ([], [])
    data.update(
        callees_released=rivals, callees_unread=unread, changed_at=float(ts) if in_window else None
    )
    return ToolResult(
        ToolStatus.SUCCESS,
        f"{full[:10]} {subject}: {stat.strip().splitlines()[-1]}{_also_released(rivals, unread)}",
        data,
    )


def _check_show(result: ToolResult, suspect: str, now: float, window_s: float) -> Verdict:
    if result.status != ToolStatus.SUCCESS or result.data.get("callees_released"):
        return Verdict.INCONCLUSIVE
    return Verdict.SUPPORTS if result.data.get("changed_at") is not None else Verdict.INCONCLUSIVE


def git_tools() -> list[Tool]:
    has_repos = Prerequisite("mapped Git repositories", lambda c: bool(c.repos))
    return [
        Tool(
            "git_log",
            "Recent commits of a service's repository before the alert.",
            {"type": "object", "properties": {
                "service": service_param(),
                "limit": {"type": "integer", "minimum": 1, "maximum": 50}},
             "required": ["service"]},
            run=_run_log, check=_check_log, source="Git", prerequisites=(has_repos,),
        ),
        Tool(
            "git_show",
            "One commit of a service's repository: subject and changed files.",
            {"type": "object", "properties": {
                "service": service_param(),
                "sha": {"type": "string", "description": "Commit id (7-40 hex)."}},
             "required": ["service", "sha"]},
            run=_run_show, check=_check_show, source="Git", prerequisites=(has_repos,),
        ),
    ]  # fmt: skip
