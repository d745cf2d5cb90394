"""The `change` lane: what changed (Git commits) and what was rolled out (Flux, Deployments).

    stackgraph ingest --lanes change --repo ./shop                  # commits since last time
    stackgraph ingest --lanes infra,change --manifests dump/        # Flux status in a dump
    stackgraph ingest --lanes infra,change                          # Flux status, live

Git: each repository's head is kept on its `Repository` node (`watermark_sha`); a re-run
reads only commits after it. Changes link to services by layout (`services/<name>/`,
`<name>/`, or `change_service_map` in the config) and to CodeUnits the graph already has.
Flux: HelmRelease / Kustomization history and ReplicaSet revisions become `Deploy` nodes,
linked to the Change their revision names. The lane reads the graph (read-only) for the
watermark and the names it links to; it writes nothing itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from stackgraph import cypher
from stackgraph.errors import InputError
from stackgraph.schema import RecordBatch

from .flux import Rollout, build_deploys, rollouts
from .git_history import Commit, build_changes, read_commits, repo_name
from .k8s_objects import Snapshot, load_manifests
from .registry import GraphReader, LaneInputs, register


def _known_names(graph: GraphReader | None) -> dict[str, str]:
    if graph is None:
        return {}
    rows = graph.read(cypher.load("lane_service_names"))
    return {str(r["name"]): str(r["label"]) for r in rows if r.get("name")}


def _watermark(graph: GraphReader | None, repo: str) -> str | None:
    if graph is None:
        return None
    rows = graph.read(cypher.load("lane_repo_watermark"), {"repo": repo})
    sha = rows[0]["sha"] if rows else None
    return sha if isinstance(sha, str) and sha else None


def _code_units(graph: GraphReader | None, repo: str) -> set[str]:
    if graph is None:
        return set()
    rows = graph.read(cypher.load("lane_repo_code_units"), {"repo": repo})
    return {str(r["path"]) for r in rows if r.get("path")}


def _cluster_configured() -> bool:
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return True
    kubeconfig = os.environ.get("KUBECONFIG")
    paths = kubeconfig.split(os.pathsep) if kubeconfig else [str(Path.home() / ".kube/config")]
    return any(Path(p).is_file() for p in paths if p)


def _flux_snapshot(inputs: LaneInputs) -> Snapshot | None:
    if inputs.manifests is not None:
        return load_manifests(inputs.manifests)
    if inputs.repos and not _cluster_configured():
        return None  # Git only; no cluster to ask about rollouts
    from .k8s_live import kube_api_client, load_live

    return load_live(kube_api_client(), infra=False, flux=True)


def _resolve_changes(
    found: list[Rollout], commits: Mapping[str, list[Commit]], graph: GraphReader | None
) -> dict[str, tuple[str, str]]:
    refs = sorted({r.commit for r in found if r.commit})
    out: dict[str, tuple[str, str]] = {}
    if not refs:
        return out
    for repo, cs in commits.items():
        for c in cs:
            for ref in refs:
                if c.sha.startswith(ref):
                    out.setdefault(ref, (repo, c.sha))
    missing = [r for r in refs if r not in out]
    if missing and graph is not None:
        for row in graph.read(cypher.load("lane_changes_by_sha"), {"shas": missing}):
            out.setdefault(str(row["ref"]), (str(row["repo"]), str(row["sha"])))
    return out


def collect_change(inputs: LaneInputs) -> RecordBatch:
    graph = inputs.graph
    known = _known_names(graph)
    services = {n for n, label in known.items() if label == "Service"}
    service_map: dict[str, str] = dict(getattr(inputs.settings, "change_service_map", {}) or {})
    service_map |= dict(inputs.options.get("service_map") or {})
    services |= set(service_map.values())
    max_commits = int(getattr(inputs.settings, "change_max_commits", 10_000))
    out = RecordBatch()
    new_commits: dict[str, list[Commit]] = {}
    for path in inputs.repos:
        repo = repo_name(path)
        since = _watermark(graph, repo)
        head, commits = read_commits(path, since, max_count=max_commits)
        new_commits[repo] = commits
        batch = build_changes(
            repo, head, commits, known_services=services, code_units=_code_units(graph, repo),
            service_map=service_map, origin=str(path),
        )  # fmt: skip
        out.extend(batch)
    snap = _flux_snapshot(inputs)
    if snap is None and not inputs.repos:
        raise InputError("the change lane needs --repo PATH, --manifests DIR or a cluster")
    if snap is not None:
        out.problems.extend(snap.problems)
        found = rollouts(snap.objects, snap.origins)
        changes = _resolve_changes(found, new_commits, graph)
        out.extend(build_deploys(found, known=known, changes=changes))
    return out


@register("change", "Git commits since the last run, and rollouts (Flux, Deployments)")
def collect(inputs: LaneInputs) -> RecordBatch:
    return collect_change(inputs)
