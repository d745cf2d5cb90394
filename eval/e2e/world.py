"""A replayed case's world as a user's platform would hold it: the lanes' graph, a Git
monorepo with the case's releases, and (in the distractor arm) one unrelated deploy.

    repo          services/<name>/ for every service, created long before the case; one
                  commit per release touching that service's folder, at the release's time
    lanes         the replay's own (`Replayer.lanes`: catalog, infra, change from a Flux
                  HelmRelease dump, telemetry), then the change lane again with the repo
                  and the same dump, as its next scheduled run would: commits become
                  Changes of the services the earlier lanes made known, and each
                  HelmRelease revision (`<version>+<sha>`) links its Deploy to its commit
    distractor    a release of a healthy service `DISTRACTOR_LEAD_S` before the alert: a
                  commit in its folder and a HelmRelease revision, nothing in the telemetry

The distractor is chosen from the data, not the label: among the services none of whose
series (its pods' and the calls into it, in the dataset) left the read path's band around
its baseline between the baseline's end and the alert (`_moved`), the root cause and the
symptom set aside, one picked by a hash of the case id; when every service moved, the one
that moved least (`Distractor.healthy` is then False, and the scorecard counts it). The
label is read only to set the root cause aside (and, later, to score).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from stackgraph.config import Settings
from stackgraph.ingest import run_lanes
from stackgraph.rca.facts import ProbeSeries
from stackgraph.rca.series import assess
from stackgraph.store import GraphStore

from ..datasets.model import Case, ChangeEvent
from ..replay import Replayer

__all__ = ["DISTRACTOR_LEAD_S", "REPO_AGE_S", "Distractor", "build_world", "pick_distractor"]

DISTRACTOR_LEAD_S = 300.0
"""The distractor is released this long before the alert: recent enough that every change
check (the plan's change scorer, `git_log`'s 30 minutes) sees it."""
REPO_AGE_S = 86_400.0
"""The monorepo's first commit (every service's folder) is a day before the case's
baseline: older than any change the read path or the agent looks back on (6 h, 30 min)."""
REPO_NAME = "platform"
_AUTHOR = ("release-bot", "release-bot@example.invalid")


@dataclass(frozen=True)
class Distractor:
    """The unrelated deploy of one arm: which service, when, and how it was chosen."""

    service: str
    at: float
    version: str
    healthy: bool
    """True when the service's series stayed in band; False: every candidate moved, and
    this one moved least."""


def _moved(case: Case, service: str, until: float) -> float:
    """How far the service's series in the dataset (its pods', and the calls into it)
    moved between the baseline's end and `until`: the largest effect of the read path's
    own verdict on one series (`rca.series.assess`: three robust units off a noisy baseline,
    a doubling or halving of a flat one, any rise from zero), with every series judged as
    kind "other", both ways. Stricter than the read path on latency and errors (no doubling
    needed, a fall counts too): a caller the fault slowed a little is not healthy."""
    b0, b1 = case.baseline_window
    worst = 0.0
    for m in case.metrics:
        if m.service != service:
            continue
        base = tuple(float(v) for v in m.values[(m.times >= b0) & (m.times < b1)])
        at = (m.times >= b1) & (m.times <= until)
        window = tuple(float(v) for v in m.values[at])
        probe = ProbeSeries("other", m.name, base, window, tuple(float(t) for t in m.times[at]))
        worst = max(worst, assess(probe, (b1, until)).effect)
    return worst


def pick_distractor(case: Case, alert_at: float) -> Distractor | None:
    """The service the distractor arm releases (module docstring); None when the case has
    no service besides its root cause and symptom."""
    pool = sorted(s for s in case.services if s not in (case.root_cause, case.symptom_service))
    if not pool:
        return None
    effects = {s: _moved(case, s, alert_at) for s in pool}
    healthy = [s for s in pool if effects[s] == 0.0]
    if healthy:
        digest = int(hashlib.sha256(case.case_id.encode()).hexdigest()[:8], 16)
        chosen = healthy[digest % len(healthy)]
    else:
        chosen = min(pool, key=lambda s: (effects[s], s))
    version = "r" + hashlib.sha256(f"{case.case_id}:{chosen}".encode()).hexdigest()[:6]
    return Distractor(chosen, alert_at - DISTRACTOR_LEAD_S, version, bool(healthy))


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def _git(repo: Path, *args: str, at: float | None = None) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": _AUTHOR[0], "GIT_AUTHOR_EMAIL": _AUTHOR[1],
           "GIT_COMMITTER_NAME": _AUTHOR[0], "GIT_COMMITTER_EMAIL": _AUTHOR[1]}  # fmt: skip
    if at is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = _iso(at)
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env=env, check=False, timeout=60)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"git {args[0]} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def write_repo(folder: Path, services: Sequence[str], releases: Sequence[ChangeEvent],
               created_at: float) -> tuple[Path, list[ChangeEvent]]:  # fmt: skip
    """A monorepo with `services/<name>/` for every service (committed at `created_at`) and
    one commit per release, oldest first, touching only that service's folder at the
    release's time. Returns the repo and the releases, each version now `<version>+<sha>`
    (a Helm chart version naming its source commit, as Flux records it)."""
    repo = folder / REPO_NAME
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for s in services:
        (repo / "services" / s).mkdir(parents=True, exist_ok=True)
        (repo / "services" / s / "VERSION").write_text("v1\n", encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "Import the platform's services", at=created_at)
    out: list[ChangeEvent] = []
    for r in sorted(releases, key=lambda c: (c.at, c.service)):
        path = repo / "services" / r.service / "VERSION"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{r.version}\n", encoding="utf-8")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "--allow-empty", "-m", f"{r.service}: release {r.version}",
             at=r.at)  # fmt: skip
        sha = _git(repo, "rev-parse", "HEAD")
        out.append(ChangeEvent(r.service, f"{r.version}+{sha[:12]}", r.at))
    return repo, out


def build_world(
    replayer: Replayer,
    graph: GraphStore,
    case: Case,
    alert_at: float,
    folder: Path,
    distractor: Distractor | None = None,
) -> tuple[Path, list[str]]:
    """Write the case (and the distractor's release, if any) into `graph` through the lanes,
    with its monorepo under `folder`; returns the repo and notes on lanes that failed."""
    released = [c for c in case.changes if c.at <= alert_at]
    if distractor is not None:
        released.append(ChangeEvent(distractor.service, distractor.version, distractor.at))
    created = case.baseline_window[0] - REPO_AGE_S
    repo, versioned = write_repo(folder, case.services, released, created)
    world = replace(case, changes=tuple(sorted(versioned, key=lambda c: c.at)))
    notes = replayer.lanes(graph, world, alert_at, folder)
    dump = folder / "flux"  # the lanes' HelmRelease dump; empty without releases, so the
    dump.mkdir(exist_ok=True)  # change lane never asks a cluster the machine may know
    settings: Settings = replayer.settings
    _, failures = run_lanes(graph, settings, "change", repos=(repo,), manifests=dump,
                            clock=lambda: alert_at, who="eval")  # fmt: skip
    return repo, notes + [f"lane failed: {exc}" for exc in failures]
