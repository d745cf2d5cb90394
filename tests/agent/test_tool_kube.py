"""`k8s_pod_status`, `k8s_events`, `k8s_logs` and `flux_status` through the real `kubernetes`
client against the shared fake API server (tests/kube_apiserver.py): real paths, real-shaped
JSON, label selectors, pod logs with kubelet timestamps, 404 for CRDs not installed."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from kube_apiserver import FakeKube, kube_list, serve_kube

from stackgraph.rca.agent import ToolContext, ToolStatus, Verdict, call_tool, default_tools

AT = float(int(time.time()) - 120)
"""The alert, two minutes ago: pod logs are asked for with sinceSeconds from the wall clock."""
WINDOW = 1800.0
TOOLS = default_tools()


def iso(t: float, nanos: bool = False) -> str:
    text = datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}.{int((t % 1) * 1e9):09d}Z" if nanos else f"{text}Z"


def pod(name: str, service: str, rs: str, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "shop",
                     "labels": {"app.kubernetes.io/name": service},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                          "name": rs, "uid": "u", "controller": True}]},
        "spec": {"containers": [{"name": "app", "image": f"{service}:1"},
                                {"name": "proxy", "image": "envoy:1"}]},
        "status": {"phase": "Running", **(status or {"containerStatuses": [
            {"name": c, "image": "x", "imageID": "", "ready": True, "restartCount": 0,
             "state": {"running": {}}} for c in ("app", "proxy")]})},
    }  # fmt: skip


def event(obj: str, reason: str, at: float | None, kind: str = "Pod", type_: str = "Warning",
          event_time: float | None = None) -> dict[str, Any]:  # fmt: skip
    return {
        "metadata": {"name": f"{obj}.{reason}.{int(at or event_time or 0)}", "namespace": "shop"},
        "involvedObject": {"kind": kind, "name": obj, "namespace": "shop"},
        "reason": reason, "message": f"{reason} for {obj}", "type": type_, "count": 3,
        "firstTimestamp": iso(at) if at else None, "lastTimestamp": iso(at) if at else None,
        "eventTime": iso(event_time, nanos=True) if event_time else None,
        "source": {"component": "kubelet"},
    }  # fmt: skip


def helmrelease(name: str, ready: str, reason: str, since: float, status: str, deployed: float,
                release_name: str | None = None) -> dict[str, Any]:  # fmt: skip
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"interval": "10m", "releaseName": release_name or name,
                 "chart": {"spec": {"chart": release_name or name, "version": "*"}}},
        "status": {
            "conditions": [{"type": "Ready", "status": ready, "reason": reason,
                            "message": f"Helm upgrade {reason}", "lastTransitionTime": iso(since)}],
            "history": [
                {"name": name, "namespace": "shop", "version": 4, "status": status,
                 "chartName": name, "chartVersion": "1.4.3", "appVersion": "1.4.3",
                 "firstDeployed": iso(AT - 86400 * 30), "lastDeployed": iso(deployed),
                 "digest": "sha256:aa", "configDigest": "sha256:bb"},
                {"name": name, "namespace": "shop", "version": 3, "status": "superseded",
                 "chartName": name, "chartVersion": "1.4.2", "lastDeployed": iso(AT - 86400)},
            ],
            "lastAttemptedRevision": "1.4.3",
        },
    }  # fmt: skip


def log_lines(errors: int, infos: int, start: float, end: float) -> list[tuple[float, str]]:
    out = [(start + (end - start) * (i + 1) / (infos + 1), "level=info msg=served")
           for i in range(infos)]  # fmt: skip
    out += [(start + (end - start) * (i + 1) / (errors + 1), "level=error msg=charge failed")
            for i in range(errors)]  # fmt: skip
    return out


BASE, WIN, AFTER = (AT - 2 * WINDOW, AT - WINDOW), (AT - WINDOW, AT), (AT, AT + 100)
LOGS: dict[tuple[str, str], list[tuple[float, str]]] = {
    ("payment-7c9f-abcde", "app"): log_lines(1, 50, *BASE) + log_lines(12, 50, *WIN),
    ("payment-7c9f-abcde", "proxy"): log_lines(0, 20, *WIN),
    ("cart-55d-xyz12", "app"): log_lines(6, 40, *BASE) + log_lines(0, 40, *WIN)
    + log_lines(30, 0, *AFTER),  # errors after the alert do not count
    ("cart-55d-xyz12", "proxy"): [],
    ("ledger-1-aaaaa", "app"): log_lines(8, 10, *BASE) + log_lines(8, 10, *WIN),
    ("ledger-1-aaaaa", "proxy"): [],
}  # fmt: skip


def pod_log(name: str) -> Any:
    def answer(query: dict[str, list[str]]) -> Any:
        container = query.get("container", [""])[0]
        if (name, container) not in LOGS:
            return 400, {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "code": 400,
                "reason": "BadRequest",
                "message": "a container name must be specified",
            }
        since = time.time() - float(query["sinceSeconds"][0])
        stamped = query.get("timestamps") == ["true"]
        rows = sorted(r for r in LOGS[(name, container)] if r[0] >= since)
        return "".join(f"{iso(t, nanos=True) + ' ' if stamped else ''}{text}\n"
                       for t, text in rows)  # fmt: skip

    return answer


def cluster() -> dict[str, Any]:
    crash = {"containerStatuses": [{
        "name": "app", "image": "payment:1.4.3", "imageID": "", "ready": False, "restartCount": 4,
        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
        "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}}}]}  # fmt: skip
    pods = [pod("payment-7c9f-abcde", "payment", "payment-7c9f", **crash),
            pod("payment-gateway-5b-qqqqq", "payment-gateway", "payment-gateway-5b"),
            pod("cart-55d-xyz12", "cart", "cart-55d"),
            pod("ledger-1-aaaaa", "ledger", "ledger-1")]  # fmt: skip
    events = [
        event("payment-7c9f-abcde", "BackOff", AT - 300),
        event("payment-7c9f", "FailedCreate", AT - 4000, kind="ReplicaSet"),
        event("payment-gateway-5b-qqqqq", "OOMKilling", AT - 60),  # another service
        event("cart-55d-xyz12", "BackOff", AT - 5000),  # old: before the window
        event("cart-55d-xyz12", "Pulled", AT - 60, type_="Normal"),
        event("ledger-1-aaaaa", "Unhealthy", None, event_time=AT - 90.5),
        event("ledger-1-aaaaa", "BackOff", AT + 60),  # after the alert
    ]
    releases = [
        helmrelease("payment", "False", "UpgradeFailed", AT - 600, "failed", AT - 610),
        helmrelease("cart", "True", "UpgradeSucceeded", AT - 530, "deployed", AT - 540),
        helmrelease("ledger-prod", "True", "InstallSucceeded", AT - 86400 * 3, "deployed",
                    AT - 86400 * 3, release_name="ledger"),
        helmrelease("inventory", "False", "UpgradeFailed", AT + 300, "failed", AT + 290),
    ]  # fmt: skip
    routes: dict[str, Any] = {
        "/api/v1/pods": kube_list("PodList", "v1", pods),
        "/api/v1/events": kube_list("EventList", "v1", events),
        "/apis/helm.toolkit.fluxcd.io/v2/helmreleases": kube_list(
            "HelmReleaseList", "helm.toolkit.fluxcd.io/v2", releases),
    }  # fmt: skip
    for p in pods:
        name = p["metadata"]["name"]
        routes[f"/api/v1/namespaces/shop/pods/{name}/log"] = pod_log(name)
    return routes


@pytest.fixture
def kube() -> Iterator[FakeKube]:
    with serve_kube(cluster()) as fake:
        yield fake


def run(fake: FakeKube, tool: str, service: str) -> tuple[Any, Verdict]:
    ctx = ToolContext(kube=fake.api_client(), kube_namespace="shop", at=AT, window_s=WINDOW)
    result = call_tool(TOOLS[tool], ctx, {"service": service})
    return result, TOOLS[tool].check(result, service, AT, WINDOW)


def test_pod_status_supports_a_crashing_service(kube: FakeKube) -> None:
    result, verdict = run(kube, "k8s_pod_status", "payment")
    assert result.status == ToolStatus.SUCCESS
    assert "NOT ready, 4 restarts (CrashLoopBackOff, OOMKilled)" in result.summary
    assert verdict == Verdict.SUPPORTS
    assert "labelSelector=app.kubernetes.io/name%3Dpayment" in kube.seen[0]
    healthy, verdict = run(kube, "k8s_pod_status", "cart")
    assert "cart-55d-xyz12 Running, ready, 0 restarts" in healthy.summary
    assert verdict == Verdict.REFUTES
    empty, verdict = run(kube, "k8s_pod_status", "search")
    assert empty.status == ToolStatus.NO_DATA and verdict == Verdict.INCONCLUSIVE


def test_events_in_the_window_support(kube: FakeKube) -> None:
    result, verdict = run(kube, "k8s_events", "payment")
    assert result.status == ToolStatus.SUCCESS
    assert verdict == Verdict.SUPPORTS
    reasons = {(w["reason"], w["in_window"]) for w in result.data["warnings"]}
    assert reasons == {("BackOff", True), ("FailedCreate", False)}  # RS event, too old
    assert "OOMKilling" not in result.summary  # payment-gateway's pod is not payment's
    assert "BackOff x3 on Pod/payment-7c9f-abcde 5 min before the alert" in result.summary
    assert any(p.startswith("/api/v1/namespaces/shop/events") for p in kube.seen)


def test_old_normal_or_later_events_are_inconclusive(kube: FakeKube) -> None:
    old, verdict = run(kube, "k8s_events", "cart")
    assert [w["reason"] for w in old.data["warnings"]] == ["BackOff"]  # Normal dropped
    assert verdict == Verdict.INCONCLUSIVE
    ledger, verdict = run(kube, "k8s_events", "ledger")
    found = {w["reason"]: w["in_window"] for w in ledger.data["warnings"]}
    assert found == {"Unhealthy": True, "BackOff": False}  # eventTime only; after the alert
    assert verdict == Verdict.SUPPORTS  # the failed probe 90 s before the alert
    none, verdict = run(kube, "k8s_events", "search")
    assert none.status == ToolStatus.NO_DATA and verdict == Verdict.INCONCLUSIVE


def test_logs_error_lines_rising_in_the_window_support(kube: FakeKube) -> None:
    result, verdict = run(kube, "k8s_logs", "payment")
    assert result.status == ToolStatus.SUCCESS, result.summary
    assert (result.data["errors"], result.data["baseline_errors"]) == (12, 1)
    assert (result.data["lines"], result.data["baseline_lines"]) == (82, 51)
    assert result.data["containers"] == ["payment-7c9f-abcde/app", "payment-7c9f-abcde/proxy"]
    assert (result.data["recent_errors"], result.data["recent_lines"]) == (2, 13)
    assert "; 2 of 13 in the last 5 min; e.g. " in result.summary  # still failing: supports
    assert verdict == Verdict.SUPPORTS
    asked = [p for p in kube.seen if "/log?" in p]
    assert all("timestamps=true" in p and "sinceSeconds=" in p for p in asked)


def test_logs_quiet_or_steady_do_not_support(kube: FakeKube) -> None:
    cart, verdict = run(kube, "k8s_logs", "cart")
    assert (cart.data["errors"], cart.data["baseline_errors"]) == (0, 6)
    assert verdict == Verdict.REFUTES  # it logged, no errors; the later burst is after
    ledger, verdict = run(kube, "k8s_logs", "ledger")
    assert (ledger.data["errors"], ledger.data["baseline_errors"]) == (8, 8)
    assert verdict == Verdict.INCONCLUSIVE
    none, verdict = run(kube, "k8s_logs", "search")
    assert none.status == ToolStatus.NO_DATA and verdict == Verdict.INCONCLUSIVE


def test_flux_failed_or_just_upgraded_release_supports(kube: FakeKube) -> None:
    failed, verdict = run(kube, "flux_status", "payment")
    assert failed.status == ToolStatus.SUCCESS
    assert "HelmRelease shop/payment Ready=False UpgradeFailed" in failed.summary
    assert verdict == Verdict.SUPPORTS
    upgraded, verdict = run(kube, "flux_status", "cart")
    assert "deployed 9 min before the alert" in upgraded.summary
    assert verdict == Verdict.SUPPORTS
    assert upgraded.data["changed_at"] == AT - 540  # what a reading must have seen after
    # kustomizations: the CRD is not installed (404) and is skipped
    assert any("/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations" in p for p in kube.seen)


def test_flux_steady_or_later_failure_is_inconclusive(kube: FakeKube) -> None:
    steady, verdict = run(kube, "flux_status", "ledger")  # matched by releaseName
    assert "HelmRelease shop/ledger-prod Ready=True" in steady.summary
    assert verdict == Verdict.INCONCLUSIVE
    later, verdict = run(kube, "flux_status", "inventory")  # failed after the alert
    assert later.status == ToolStatus.SUCCESS and verdict == Verdict.INCONCLUSIVE
    none, verdict = run(kube, "flux_status", "search")
    assert none.status == ToolStatus.NO_DATA and verdict == Verdict.INCONCLUSIVE


def test_api_errors_are_results_with_a_status() -> None:
    forbidden = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 403,
                 "reason": "Forbidden", "message": "events is forbidden"}  # fmt: skip
    broken = dict(forbidden, code=500, reason="InternalError", message="etcdserver: timeout")
    routes = {"/api/v1/namespaces/shop/pods": (500, broken),
              "/api/v1/namespaces/shop/events": (403, forbidden),
              "/apis/helm.toolkit.fluxcd.io/v2/helmreleases": (500, broken)}  # fmt: skip
    with serve_kube(routes) as fake:
        for tool in ("k8s_pod_status", "k8s_events", "k8s_logs", "flux_status"):
            result, verdict = run(fake, tool, "payment")
            assert result.status == ToolStatus.ERROR, (tool, result)
            assert "Kubernetes API answered 500" in result.summary
            assert verdict == Verdict.INCONCLUSIVE
    with serve_kube({"/api/v1/pods": kube_list("PodList", "v1", []),
                     "/api/v1/namespaces/shop/events": (403, forbidden)}) as fake:  # fmt: skip
        denied, _ = run(fake, "k8s_events", "payment")
    assert denied.status == ToolStatus.UNAVAILABLE and "403" in denied.summary
    down, verdict = run(fake, "k8s_events", "payment")  # the server is gone
    assert down.status == ToolStatus.UNAVAILABLE and "unreachable" in down.summary
    assert verdict == Verdict.INCONCLUSIVE


def test_without_a_cluster_the_tools_are_unavailable_not_errors() -> None:
    for name in ("k8s_pod_status", "k8s_events", "k8s_logs", "flux_status"):
        status = TOOLS[name].status(ToolContext())
        assert not status.enabled and "Kubernetes cluster" in status.reason
        result = call_tool(TOOLS[name], ToolContext(), {"service": "payment"})
        assert result.status == ToolStatus.UNAVAILABLE
