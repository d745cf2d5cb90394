"""Kubernetes tools through the official client: pod status, events, logs, Flux status.

Pods of a service are found by the label `app.kubernetes.io/name=<service>` in the
configured namespace; the cluster comes from in-cluster config or kubeconfig, never from
the model. Events, logs and Flux history are read against the alert window (see
`windows.py`): what happened before the alert counts, what happened after does not.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from ..clock import parse_time
from ..windows import ALERT_LEAD_S, Windows
from .evidence import Verdict
from .log_lines import line_verdict, recent_phrase
from .toolbox import (
    Prerequisite,
    Runner,
    Tool,
    ToolContext,
    ToolResult,
    ToolStatus,
    recent,
    service_param,
)

BAD_REASONS = {"OOMKilled", "Error", "CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull"}
"""Container state reasons that support a suspect (k8s_pod_status)."""
BAD_EVENTS = {
    "OOMKilled", "OOMKilling", "BackOff", "CrashLoopBackOff", "Unhealthy", "Failed",
    "FailedScheduling", "Evicted", "FailedMount", "FailedCreatePodSandBox", "FailedKillPod",
    "FailedPostStartHook", "FailedPreStopHook", "ErrImagePull", "ImagePullBackOff",
}  # fmt: skip
"""Warning event reasons that support a suspect when they occur in the alert window."""
FLUX_KINDS = (
    ("HelmRelease", "helm.toolkit.fluxcd.io", ("v2", "v2beta2"), "helmreleases"),
    ("Kustomization", "kustomize.toolkit.fluxcd.io", ("v1",), "kustomizations"),
)
LOG_PODS = 5
LOG_BYTES = 4 << 20
API_TIMEOUT_S = 10
_ERROR_LINE = re.compile(r"\b(error|exception|panic|fatal|traceback)\b", re.IGNORECASE)
_HAS_CLUSTER = Prerequisite("a Kubernetes cluster (kubeconfig or in-cluster)",
                            lambda c: c.kube is not None)  # fmt: skip


def _selector(service: str) -> str:
    return f"app.kubernetes.io/name={service}"


def _core(ctx: ToolContext) -> client.CoreV1Api:
    return client.CoreV1Api(ctx.kube)


def _pods(ctx: ToolContext, service: str) -> list[Any]:
    listing = _core(ctx).list_namespaced_pod(
        ctx.kube_namespace, label_selector=_selector(service), limit=500,
        _request_timeout=API_TIMEOUT_S,
    )  # fmt: skip
    return list(listing.items or [])


def _api_error(exc: ApiException, what: str) -> ToolResult:
    reason = str(exc.reason or "").strip()
    status = ToolStatus.UNAVAILABLE if exc.status in (401, 403) else ToolStatus.ERROR
    return ToolResult(status, f"Kubernetes API answered {exc.status} {reason} for {what}",
                      {"http_status": exc.status})  # fmt: skip


def _ts(value: Any) -> float | None:
    if isinstance(value, datetime):
        return value.timestamp()
    return parse_time(value)


def _ago(now: float, t: float | None) -> str:
    if t is None:
        return "at an unknown time"
    minutes = (now - t) / 60
    return f"{minutes:.0f} min before the alert" if minutes >= 0 else f"{-minutes:.0f} min after"


# -- k8s_pod_status -------------------------------------------------------------------


def _run_pods(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    service = str(args["service"])
    try:
        pods = _pods(ctx, service)
    except ApiException as exc:
        return _api_error(exc, f"pods of {service}")
    rows: list[dict[str, Any]] = []
    for pod in pods:
        statuses = (pod.status.container_statuses if pod.status else None) or []
        reasons: set[str] = set()
        for cs in statuses:
            for state in (cs.state, cs.last_state):
                if state is None:
                    continue
                for part in (state.waiting, state.terminated):
                    if part is not None and part.reason:
                        reasons.add(str(part.reason))
        rows.append({
            "pod": pod.metadata.name,
            "phase": pod.status.phase if pod.status else None,
            "ready": bool(statuses) and all(cs.ready for cs in statuses),
            "restarts": sum(int(cs.restart_count or 0) for cs in statuses),
            "reasons": sorted(reasons),
        })  # fmt: skip
    if not rows:
        return ToolResult(ToolStatus.NO_DATA, f"no pods labelled {_selector(service)}")
    text = "; ".join(
        f"{r['pod']} {r['phase']}, {'ready' if r['ready'] else 'NOT ready'}, "
        f"{r['restarts']} restarts" + (f" ({', '.join(r['reasons'])})" if r["reasons"] else "")
        for r in rows
    )
    return ToolResult(ToolStatus.SUCCESS, text, {"pods": rows})


def _check_pods(result: ToolResult, suspect: str, now: float, window_s: float) -> Verdict:
    if result.status != ToolStatus.SUCCESS:
        return Verdict.INCONCLUSIVE
    pods = result.data["pods"]
    if any(not p["ready"] or p["restarts"] > 0 or BAD_REASONS & set(p["reasons"]) for p in pods):
        return Verdict.SUPPORTS
    return Verdict.REFUTES


# -- k8s_events -----------------------------------------------------------------------


def _run_events(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    """Warning events about the service's pods, their ReplicaSets or the service's own
    objects (named exactly like it), split by the alert window."""
    service = str(args["service"])
    win = Windows.ending_at(ctx.now(), ctx.window_s)
    try:
        pods = _pods(ctx, service)
        events = _core(ctx).list_namespaced_event(
            ctx.kube_namespace, limit=500, _request_timeout=API_TIMEOUT_S
        ).items or []  # fmt: skip
    except ApiException as exc:
        return _api_error(exc, f"events of {service}")
    names = {service} | {p.metadata.name for p in pods}
    names |= {o.name for p in pods for o in (p.metadata.owner_references or [])}
    rows: list[dict[str, Any]] = []
    for e in events:
        obj = e.involved_object
        if e.type != "Warning" or obj is None or obj.name not in names:
            continue
        t = _ts(e.last_timestamp) or _ts(e.event_time) or _ts(e.first_timestamp)
        rows.append({"reason": str(e.reason or ""), "message": str(e.message or "")[:300],
                     "object": f"{obj.kind}/{obj.name}", "count": int(e.count or 1), "time": t,
                     "in_window": t is not None and win.which(t) == "window"})  # fmt: skip
    if not rows:
        return ToolResult(ToolStatus.NO_DATA, f"no Warning events for {service}",
                          {"warnings": []})  # fmt: skip
    rows.sort(key=lambda r: -(r["time"] or 0.0))
    text = "; ".join(f"{r['reason']} x{r['count']} on {r['object']} {_ago(win.end, r['time'])}: "
                     f"{r['message'][:120]}" for r in rows[:8])  # fmt: skip
    return ToolResult(ToolStatus.SUCCESS, text, {"warnings": rows})


def _check_events(result: ToolResult, suspect: str, now: float, window_s: float) -> Verdict:
    """An OOM kill, crash back-off, failed probe... in the alert window supports; no such
    event proves nothing (events expire after an hour), so absence is inconclusive."""
    if result.status != ToolStatus.SUCCESS:
        return Verdict.INCONCLUSIVE
    bad = [w for w in result.data["warnings"] if w["in_window"] and w["reason"] in BAD_EVENTS]
    return Verdict.SUPPORTS if bad else Verdict.INCONCLUSIVE


# -- k8s_logs -------------------------------------------------------------------------


def _run_logs(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    """Error lines of each container of up to LOG_PODS pods, by the kubelet's timestamps,
    in the alert window vs the baseline, and in the window's last minutes
    (`log_lines.errors_ended`)."""
    service = str(args["service"])
    win = Windows.ending_at(ctx.now(), ctx.window_s)
    since = max(1, math.ceil(time.time() - win.baseline[0]))
    counts = {"errors": 0, "baseline_errors": 0, "lines": 0, "baseline_lines": 0}
    recent_from = win.end - ALERT_LEAD_S if win.span_s > ALERT_LEAD_S else None
    if recent_from is not None:
        counts |= {"recent_errors": 0, "recent_lines": 0}
    example, read = "", []
    try:
        pods = _pods(ctx, service)
        for pod in pods[:LOG_PODS]:
            for container in pod.spec.containers if pod.spec else []:
                resp: Any = _core(ctx).read_namespaced_pod_log(
                    pod.metadata.name, ctx.kube_namespace, container=container.name,
                    timestamps=True, since_seconds=since, limit_bytes=LOG_BYTES,
                    _preload_content=False, _request_timeout=API_TIMEOUT_S,
                )  # fmt: skip
                read.append(f"{pod.metadata.name}/{container.name}")
                for line in resp.data.decode("utf-8", "replace").splitlines():
                    stamp, _, text = line.partition(" ")
                    t = parse_time(stamp)
                    where = win.which(t) if t is not None else None
                    if where is None:
                        continue
                    error = bool(_ERROR_LINE.search(text))
                    prefixes = ["" if where == "window" else "baseline_"]
                    if recent_from is not None and t is not None and t > recent_from:
                        prefixes.append("recent_")
                    for prefix in prefixes:
                        counts[f"{prefix}lines"] += 1
                        counts[f"{prefix}errors"] += error
                    if error and where == "window":
                        example = text
    except ApiException as exc:
        return _api_error(exc, f"logs of {service}")
    if not pods:
        return ToolResult(ToolStatus.NO_DATA, f"no pods labelled {_selector(service)}")
    if counts["lines"] == 0:
        return ToolResult(ToolStatus.NO_DATA, f"no log lines of {service} in the alert window",
                          {**counts, "containers": read})  # fmt: skip
    shown = f"; e.g. {example[:200]}" if example else ""
    shown = recent_phrase(counts) + shown
    return ToolResult(
        ToolStatus.SUCCESS,
        f"{counts['errors']} error lines of {counts['lines']} from {len(read)} container(s) of "
        f"{service} in {win.describe()} ({counts['baseline_errors']} of "
        f"{counts['baseline_lines']}){shown}",
        {**counts, "containers": read},
    )


def _check_logs(result: ToolResult, suspect: str, now: float, window_s: float) -> Verdict:
    if result.status != ToolStatus.SUCCESS:
        return Verdict.INCONCLUSIVE
    return line_verdict(result.data)


# -- flux_status ----------------------------------------------------------------------


def _flux_objects(ctx: ToolContext) -> list[tuple[str, dict[str, Any]]]:
    """Every HelmRelease and Kustomization the credentials can list (cluster-wide, else
    the configured namespace); a kind whose CRD is not installed (404) is skipped."""
    api = client.CustomObjectsApi(ctx.kube)
    out: list[tuple[str, dict[str, Any]]] = []
    for kind, group, versions, plural in FLUX_KINDS:
        for version in versions:
            try:
                try:
                    listing: Any = api.list_cluster_custom_object(
                        group, version, plural, limit=500, _request_timeout=API_TIMEOUT_S
                    )
                except ApiException as exc:
                    if exc.status != 403:
                        raise
                    listing = api.list_namespaced_custom_object(
                        group, version, ctx.kube_namespace, plural, limit=500,
                        _request_timeout=API_TIMEOUT_S,
                    )  # fmt: skip
            except ApiException as exc:
                if exc.status == 404:
                    continue
                raise
            out.extend((kind, item) for item in dict(listing).get("items", []))
            break
    return out


def _matches(item: Mapping[str, Any], service: str) -> bool:
    spec = item.get("spec", {})
    chart = spec.get("chart", {}).get("spec", {}).get("chart")
    return service in {item.get("metadata", {}).get("name"), spec.get("releaseName"), chart}


def _run_flux(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    service = str(args["service"])
    now = ctx.now()
    try:
        objects = _flux_objects(ctx)
    except ApiException as exc:
        return _api_error(exc, "Flux objects")
    found: list[dict[str, Any]] = []
    for kind, item in objects:
        if not _matches(item, service):
            continue
        status = item.get("status", {})
        ready: dict[str, Any] = next((c for c in status.get("conditions", [])
                                      if c.get("type") == "Ready"), {})  # fmt: skip
        history = status.get("history") or [{}]
        last = history[0]  # Flux keeps the newest release first
        found.append({
            "kind": kind,
            "name": f"{item.get('metadata', {}).get('namespace', '')}/{item['metadata']['name']}",
            "ready": ready.get("status"),
            "reason": ready.get("reason", ""),
            "message": str(ready.get("message", ""))[:300],
            "ready_since": parse_time(ready.get("lastTransitionTime")),
            "release_status": last.get("status"),
            "last_deployed": parse_time(last.get("lastDeployed")),
            "revision": last.get("chartVersion") or status.get("lastAppliedRevision")
            or status.get("lastAttemptedRevision", ""),
        })  # fmt: skip
    if not found:
        return ToolResult(ToolStatus.NO_DATA, f"no Flux HelmRelease/Kustomization for {service}")
    text = "; ".join(
        f"{f['kind']} {f['name']} Ready={f['ready']} {f['reason']}, revision {f['revision']}"
        + (f" {f['release_status']} {_ago(now, f['last_deployed'])}"
           if f["last_deployed"] is not None else "")
        + (f": {f['message'][:150]}" if f["ready"] == "False" else "")
        for f in found
    )  # fmt: skip
    deployed = [
        t
        for t in (f["last_deployed"] for f in found)
        if t is not None and recent(t, now, ctx.window_s)
    ]
    return ToolResult(ToolStatus.SUCCESS, text,
                      {"objects": found, "changed_at": max(deployed, default=None)})  # fmt: skip


def _check_flux(result: ToolResult, suspect: str, now: float, window_s: float) -> Verdict:
    """Supports: a release not Ready (or whose last upgrade failed) at the alert time, or
    one upgraded within the window before the alert. A steady release proves nothing."""
    if result.status != ToolStatus.SUCCESS:
        return Verdict.INCONCLUSIVE
    for o in result.data["objects"]:
        since, deployed = o["ready_since"], o["last_deployed"]
        if o["ready"] == "False" and (since is None or since <= now):
            return Verdict.SUPPORTS
        if o["release_status"] == "failed" and (deployed is None or deployed <= now):
            return Verdict.SUPPORTS
    return Verdict.SUPPORTS if result.data.get("changed_at") is not None else Verdict.INCONCLUSIVE


def _reachable(run: Runner) -> Runner:
    """An API server that cannot be reached is a result, like any other failure."""

    def guarded(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
        try:
            return run(ctx, args)
        except urllib3.exceptions.HTTPError as exc:
            return ToolResult(ToolStatus.UNAVAILABLE,
                              f"Kubernetes API is unreachable: {type(exc).__name__}")  # fmt: skip

    return guarded


def kube_tools() -> list[Tool]:
    params = {"type": "object", "properties": {"service": service_param()},
              "required": ["service"]}  # fmt: skip
    common: dict[str, Any] = {"parameters": params, "source": "StaticInfra",
                              "prerequisites": (_HAS_CLUSTER,), "timeout_s": 15.0}  # fmt: skip
    return [
        Tool("k8s_pod_status", "Readiness, restarts and crash reasons of a service's pods.",
             run=_reachable(_run_pods), check=_check_pods, **common),
        Tool("k8s_events", "Warning events (OOM kills, back-offs, failed probes) of a "
             "service's pods, in the alert window.", run=_reachable(_run_events),
             check=_check_events, **common),
        Tool("k8s_logs", "Error lines in a service's pod logs, in the alert window vs the "
             "window before it.", run=_reachable(_run_logs), check=_check_logs, **common),
        Tool("flux_status", "Flux HelmRelease/Kustomization of a service: readiness, last "
             "upgrade result and when it happened.", run=_reachable(_run_flux),
             check=_check_flux, **common),
    ]  # fmt: skip
