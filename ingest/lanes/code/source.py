"""The thin loader: repos (local paths or Git URLs) → per-service lists of (path, text).

URL repos are cloned shallow into `<data_dir>/repos/` with gitpython and fetched on later
runs. Credentials (a token from `STACKGRAPH_GIT_TOKEN`/`GIT_TOKEN`, a mounted token file,
or `user:pass@` in the URL) travel only as an HTTP header in the git process's
environment: never in argv, never in `.git/config`, never in a log or an error message.
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import git

from stackgraph.config import Settings
from stackgraph.errors import InputError
from stackgraph.repo_config import RepoSpec, redact_url
from stackgraph.schema import Rejection

from ..folder import is_inside

MAX_FILE_BYTES = 1_000_000
NOT_SERVICES = {
    "tests", "test", "docs", "doc", "scripts", "tools", "lib", "libs", "common", "shared",
    "deploy", "helm", "charts", "examples", "build", "dist", "venv", "node_modules", "site",
    "migrations", "bin", "ci", "hack", "infra",
}  # fmt: skip
_SKIP_DIRS = {"__pycache__", "node_modules", "venv", "site-packages", "build", "dist"}


@dataclass
class ServiceFiles:
    root: str
    files: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class RepoSnapshot:
    """One repo as read now: where, its name, and each service's Python files."""

    spec: RepoSpec
    name: str
    root: Path
    url_base: str | None
    services: dict[str, ServiceFiles] = field(default_factory=dict)
    problems: list[Rejection] = field(default_factory=list)


# -- credentials ---------------------------------------------------------------------------


def _token(settings: Settings) -> str | None:
    if settings.git_token is not None:
        return settings.git_token.get_secret_value() or None
    if settings.git_token_file is not None:
        try:
            return settings.git_token_file.read_text(encoding="utf-8").strip() or None
        except OSError as exc:
            raise InputError(
                f"cannot read git token file {settings.git_token_file}: {exc.strerror}"
            ) from exc
    return None


@dataclass(frozen=True)
class _Remote:
    url: str
    """The URL without credentials: what git is told and what `.git/config` keeps."""
    env: dict[str, str]
    secrets: tuple[str, ...]


def _remote(url: str, settings: Settings) -> _Remote:
    parts = urlsplit(url)
    secrets: list[str] = []
    env = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "echo"}
    user, password = parts.username, parts.password
    clean = url
    if parts.scheme in {"http", "https"}:
        host = parts.hostname or ""
        netloc = host + (f":{parts.port}" if parts.port else "")
        clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
        token = _token(settings)
        if password or token:
            basic = f"{user or 'x-access-token'}:{password or token}"
            header = "Authorization: Basic " + base64.b64encode(basic.encode()).decode()
            env |= {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "http.extraHeader",
                    "GIT_CONFIG_VALUE_0": header}  # fmt: skip
            secrets += [s for s in (password, token, basic, header) if s]
            secrets.append(header.split(" ", 2)[2])
    elif parts.password:
        secrets.append(parts.password)
    return _Remote(clean, env, tuple(secrets))


def _scrub(text: str, remote: _Remote) -> str:
    for secret in remote.secrets:
        text = text.replace(secret, "***")
    return redact_url(text)


# -- clone / fetch -------------------------------------------------------------------------


def _cache_dir(spec: RepoSpec, settings: Settings, remote: _Remote) -> Path:
    digest = hashlib.sha1(remote.url.encode()).hexdigest()[:8]
    return settings.data_dir / "repos" / f"{spec.repo_name}-{digest}"


def _git_error(action: str, spec: RepoSpec, exc: git.GitCommandError, remote: _Remote) -> str:
    stderr = str(exc.stderr or "").replace("stderr:", "").strip().strip("'").strip()
    detail = " ".join(_scrub(stderr, remote).split()) or f"git exited with {exc.status}"
    return f"cannot {action} repo {spec.display}: {detail}"


def materialise(spec: RepoSpec, settings: Settings) -> Path:
    """The repo's working tree on disk: the path itself, or a clone kept up to date."""
    if spec.path is not None:
        root = spec.path.expanduser().resolve()
        if not root.is_dir():
            raise InputError(f"repo path {root} is not a directory")
        return root
    assert spec.url is not None
    remote = _remote(spec.url, settings)
    dest = _cache_dir(spec, settings, remote)
    ref = spec.branch or "HEAD"
    try:
        if (dest / ".git").is_dir():
            repo = git.Repo(dest)
            with repo.git.custom_environment(**remote.env):
                try:
                    repo.git.fetch("--depth", "1", "origin", ref)
                except git.GitCommandError as exc:
                    if "shallow" not in str(exc.stderr):
                        raise
                    repo.git.fetch("origin", ref)
                repo.git.reset("--hard", "FETCH_HEAD")
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        kwargs: dict[str, object] = {"env": remote.env}
        if spec.branch:
            kwargs |= {"branch": spec.branch, "single_branch": True}
        try:
            git.Repo.clone_from(remote.url, dest, depth=1, **kwargs)  # type: ignore[arg-type]
        except git.GitCommandError as exc:
            if "shallow" not in str(exc.stderr):
                raise
            git.Repo.clone_from(remote.url, dest, **kwargs)  # type: ignore[arg-type]
    except git.GitCommandError as exc:
        action = "fetch" if (dest / ".git").is_dir() else "clone"
        raise InputError(_git_error(action, spec, exc, remote)) from None
    except OSError as exc:
        raise InputError(f"cannot clone repo {spec.display} into {dest}: {exc.strerror}") from None
    return dest


def web_base(spec: RepoSpec) -> str | None:
    """`https://host/org/repo/blob/<branch>` for http(s) URLs, without credentials."""
    if not spec.url or not spec.url.startswith(("http://", "https://")):
        return None
    parts = urlsplit(spec.url)
    netloc = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
    path = parts.path.removesuffix(".git").rstrip("/")
    return urlunsplit((parts.scheme, netloc, f"{path}/blob/{spec.branch or 'HEAD'}", "", ""))


# -- files and services --------------------------------------------------------------------


def python_files(root: Path) -> list[str]:
    """Repo-relative paths of Python files: git's view when it is a repo, else a walk."""
    if (root / ".git").exists():
        try:
            listed = git.Repo(root).git.ls_files("-co", "--exclude-standard", "--", "*.py")
            return sorted(p for p in listed.splitlines() if p and (root / p).is_file())
        except git.GitCommandError:
            pass
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS)
        rel = Path(dirpath).relative_to(root)
        out += [(rel / f).as_posix() for f in filenames if f.endswith(".py")]
    return sorted(out)


def _norm(name: str) -> str:
    return name.lower().replace("_", "-")


def _under(path: str, prefix: str) -> bool:
    prefix = prefix.strip("/")
    return not prefix or path == prefix or path.startswith(prefix + "/")


def assign_services(paths: list[str], spec: RepoSpec) -> dict[str, ServiceFiles]:
    """Which service each file belongs to: the config's rules, else the layout."""
    out: dict[str, ServiceFiles] = {}
    if isinstance(spec.services, dict):
        for path in paths:
            for rule, svc in spec.services.items():
                glob = any(c in rule for c in "*?[")
                if (glob and fnmatch.fnmatch(path, rule)) or (not glob and _under(path, rule)):
                    root = "" if glob else rule.strip("/")
                    out.setdefault(svc, ServiceFiles(root)).files.append((path, ""))
                    break
        return out
    tops = {p.split("/")[0] for p in paths if "/" in p}
    under_services = {
        p.split("/")[1] for p in paths if p.startswith("services/") and p.count("/") >= 2
    }
    if isinstance(spec.services, list):
        for svc in spec.services:
            roots = [f"services/{v}" for v in (svc, svc.replace("-", "_")) if v in under_services]
            roots += [v for v in (svc, svc.replace("-", "_")) if v in tops]
            if roots:
                out[svc] = ServiceFiles(roots[0])
            elif len(spec.services) == 1:
                out[svc] = ServiceFiles("")
    elif under_services:
        out = {_norm(d): ServiceFiles(f"services/{d}") for d in sorted(under_services)}
    else:
        dirs = sorted(t for t in tops if t.lower() not in NOT_SERVICES and not t.startswith("."))
        out = {_norm(d): ServiceFiles(d) for d in dirs}
        if not out and any("/" not in p for p in paths):
            out = {_norm(spec.repo_name): ServiceFiles("")}
    for sf in out.values():
        sf.files = [(p, "") for p in paths if _under(p, sf.root)]
    return out


def load_repo(spec: RepoSpec, settings: Settings) -> RepoSnapshot:
    """Materialise the repo and read each service's Python files (bad files → problems)."""
    root = materialise(spec, settings)
    snap = RepoSnapshot(spec, spec.repo_name, root, web_base(spec))
    snap.services = assign_services(python_files(root), spec)
    for sf in snap.services.values():
        texts: list[tuple[str, str]] = []
        for path, _ in sf.files:
            unit = f"CodeUnit{{repo={snap.name!r}, path={path!r}}}"
            full = root / path
            if not is_inside(full, root):  # the file, or a folder on its path
                msg = "a symlink out of the repo; skipped"
                snap.problems.append(Rejection(unit, "source", msg, f"{snap.name}:{path}"))
                continue
            try:
                data = full.read_bytes()
            except OSError as exc:
                snap.problems.append(Rejection(unit, "source", f"unreadable: {exc.strerror}", path))
                continue
            if len(data) > MAX_FILE_BYTES:
                msg = f"{len(data)} bytes is over the {MAX_FILE_BYTES}-byte limit; skipped"
                snap.problems.append(Rejection(unit, "source", msg, path))
                continue
            try:
                texts.append((path, data.decode("utf-8")))
            except UnicodeDecodeError as exc:
                msg = f"not UTF-8 (byte {exc.start})"
                snap.problems.append(Rejection(unit, "source", msg, f"{snap.name}:{path}"))
        sf.files = texts
    return snap
