"""Kubernetes tools through the official client: pod status, events, logs, Flux status.

Pods of a service are found by the label `app.kubernetes.io/name=<service>` in the
configured namespace; the cluster comes from in-cluster config or kubeconfig, never from
the model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .evidence import Verdict
from .toolbox import Prerequisite, Tool, ToolContext, ToolResult, ToolStatus, service_param

BAD_REASONS = {"OOMKilled", "Error", "CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull"}
_ERROR_LINE = re.compile(r"\b(error|exception|panic|fatal|traceback)\b", re.IGNORECASE)
_HAS_CLUSTER = Prerequisite("a Kubernetes cluster (kubeconfig or in-cluster)",
                            lambda c: c.kube is not None)  # fmt: skip


def _selector(service: str) -> str:
    return f"app.kubernetes.io/name={service}"


def _core(ctx: ToolContext) -> Any:
    from kubernetes import client

    return client.CoreV1Api(ctx.kube)


def _run_pods(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    service = str(args["service"])
    pods = _core(ctx).list_namespaced_pod(
        ctx.kube_namespace, label_selector=_selector(service), _request_timeout=10
    )
    rows: list[dict[str, Any]] = []
    for pod in pods.items or []:
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


def _run_events(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    service = str(args["service"])
    events = _core(ctx).list_namespaced_event(ctx.kube_namespace, _request_timeout=10)
    warnings = [
        f"{e.reason}: {e.message}" for e in events.items or []
        if e.type == "Warning" and e.involved_object is not None
        and str(e.involved_object.name or "").startswith(service)
    ]  # fmt: skip
    if not warnings:
        return ToolResult(ToolStatus.NO_DATA, f"no Warning events for {service}", {"warnings": []})
    return ToolResult(ToolStatus.SUCCESS, "; ".join(warnings[:10]), {"warnings": warnings})


def _check_events(result: ToolResult, suspect: str, now: float, window_s: float) -> Verdict:
    ok = result.status == ToolStatus.SUCCESS and result.data.get("warnings")
    return Verdict.SUPPORTS if ok else Verdict.INCONCLUSIVE


def _run_logs(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    service = str(args["service"])
    core = _core(ctx)
    pods = core.list_namespaced_pod(
        ctx.kube_namespace, label_selector=_selector(service), _request_timeout=10
    )
    if not pods.items:
        return ToolResult(ToolStatus.NO_DATA, f"no pods labelled {_selector(service)}")
    name = pods.items[0].metadata.name
    text = core.read_namespaced_pod_log(
        name, ctx.kube_namespace, tail_lines=200, _request_timeout=10
    )
    bad = [line for line in str(text).splitlines() if _ERROR_LINE.search(line)]
    example = f"; e.g. {bad[-1][:200]}" if bad else ""
    summary = f"{len(bad)} error lines in the last 200 of {name}{example}"
    return ToolResult(ToolStatus.SUCCESS, summary, {"errors": len(bad), "pod": name})


def _check_logs(result: ToolResult, suspect: str, now: float, window_s: float) -> Verdict:
    ok = result.status == ToolStatus.SUCCESS and int(result.data["errors"]) >= 5
    return Verdict.SUPPORTS if ok else Verdict.INCONCLUSIVE


def _run_flux(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    from kubernetes import client

    service = str(args["service"])
    api = client.CustomObjectsApi(ctx.kube)
    found: list[dict[str, Any]] = []
    for group, version, plural in (
        ("helm.toolkit.fluxcd.io", "v2", "helmreleases"),
        ("kustomize.toolkit.fluxcd.io", "v1", "kustomizations"),
    ):
        listing: Any = api.list_namespaced_custom_object(
            group, version, ctx.kube_namespace, plural, _request_timeout=10
        )
        items: list[dict[str, Any]] = dict(listing).get("items", [])
        for item in items:
            if item.get("metadata", {}).get("name") != service:
                continue
            ready: dict[str, Any] = next((c for c in item.get("status", {}).get("conditions", [])
                          if c.get("type") == "Ready"), {})  # fmt: skip
            found.append({
                "kind": plural[:-1],
                "ready": ready.get("status"),
                "reason": ready.get("reason", ""),
                "message": str(ready.get("message", ""))[:300],
                "revision": item.get("status", {}).get("lastAppliedRevision", ""),
            })  # fmt: skip
    if not found:
        return ToolResult(ToolStatus.NO_DATA, f"no Flux HelmRelease/Kustomization named {service}")
    text = "; ".join(f"{f['kind']} {service} Ready={f['ready']} {f['reason']} rev {f['revision']}"
                     for f in found)  # fmt: skip
    return ToolResult(ToolStatus.SUCCESS, text, {"objects": found})


def _check_flux(result: ToolResult, suspect: str, now: float, window_s: float) -> Verdict:
    if result.status != ToolStatus.SUCCESS:
        return Verdict.INCONCLUSIVE
    if any(o["ready"] == "False" for o in result.data["objects"]):
        return Verdict.SUPPORTS
    return Verdict.INCONCLUSIVE


def kube_tools() -> list[Tool]:
    params = {"type": "object", "properties": {"service": service_param()},
              "required": ["service"]}  # fmt: skip
    common: dict[str, Any] = {"parameters": params, "source": "StaticInfra",
                              "prerequisites": (_HAS_CLUSTER,), "timeout_s": 15.0}  # fmt: skip
    return [
        Tool("k8s_pod_status", "Readiness, restarts and crash reasons of a service's pods.",
             run=_run_pods, check=_check_pods, **common),
        Tool("k8s_events", "Warning events of a service's pods.",
             run=_run_events, check=_check_events, **common),
        Tool("k8s_logs", "Error lines in the last 200 log lines of a service's pod.",
             run=_run_logs, check=_check_logs, **common),
        Tool("flux_status", "Flux HelmRelease/Kustomization readiness of a service.",
             run=_run_flux, check=_check_flux, **common),
    ]  # fmt: skip
