"""End to end: a real Alertmanager delivers its webhook to a real `stackgraph serve`
(uvicorn on a free port, bearer token via http_config), and the incident appears with its
plan, evidence and write-back in FalkorDB, and as an episode of the incident memory."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from kube_apiserver import FakeKube
from sgtest import require

from stackgraph.api import create_app
from stackgraph.api.threaded import free_port, serve_in_thread
from stackgraph.config import Settings
from stackgraph.memory import current_version
from stackgraph.rca.agent import ToolContext
from stackgraph.rca.model import Alert, Plan
from stackgraph.store import GraphStore

from .conftest import incident, kube_args, payment_plan

TOKEN = "e2e-token"


@pytest.fixture
def api_url(
    settings: Settings, platform: GraphStore, payment_repo: Path, payment_kube: FakeKube
) -> Iterator[str]:
    def context(alert: Alert, plan: Plan) -> ToolContext:
        return ToolContext(store=platform, alert=alert, plan=plan, at=alert.starts_at,
                           repos={"payment": payment_repo}, **kube_args(payment_kube))  # fmt: skip

    app = create_app(settings, store=platform, plan_fn=payment_plan, context_fn=context,
                     token=TOKEN)  # fmt: skip
    with serve_in_thread(app) as url:
        yield url


@pytest.fixture
def alertmanager(api_url: str, tmp_path: Path) -> Iterator[str]:
    binary = shutil.which("prometheus-alertmanager")
    require(binary is not None, "prometheus-alertmanager (scripts/system-deps.sh)")
    assert binary is not None
    config = tmp_path / "am.yml"
    config.write_text(f"""
route:
  receiver: stackgraph
  group_by: ['alertname', 'service']
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: stackgraph
    webhook_configs:
      - url: {api_url}/api/v1/alerts
        send_resolved: true
        http_config:
          authorization:
            credentials: {TOKEN}
""")
    port = free_port()
    log = (tmp_path / "am.log").open("wb")
    proc = subprocess.Popen(
        [binary, f"--config.file={config}", f"--storage.path={tmp_path / 'am-data'}",
         f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address="],
        stdout=subprocess.DEVNULL, stderr=log,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/-/ready", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, (tmp_path / "am.log").read_text()
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def test_alertmanager_webhook_end_to_end(
    alertmanager: str, api_url: str, platform: GraphStore
) -> None:
    labels = {"alertname": "HighErrorRate", "service": "checkout", "severity": "critical"}
    body = [{"labels": labels, "annotations": {"summary": "checkout 5xx > 5%"},
             "generatorURL": "http://prometheus/graph"}]  # fmt: skip
    assert httpx.post(f"{alertmanager}/api/v2/alerts", json=body).status_code == 200
    done = incident(api_url, TOKEN, lambda d: d["state"] == "done")
    fp = done["fingerprint"]
    assert done["symptom"] == "checkout" and done["plan"]["anchor"] == "checkout"
    assert done["conclusion"] == "payment" and done["root_cause"] == "payment"
    assert any(e["tool"] == "git_log" and e["verdict"] == "supports" for e in done["evidence"])
    assert done["writeback"]["written"] is True, done["writeback"]
    stored = platform._graph.ro_query(
        "MATCH (a:Alert {fingerprint:$f})-[:FIRED_ON]->(s:Service {name:'checkout'}) "
        "MATCH (i:Incident {fingerprint:$f})-[:ROOT_CAUSED_BY]->(r) "
        "RETURN i.conclusion, r.name", {"f": fp}).result_set  # fmt: skip
    assert stored == [["payment", "payment"]]
    # the concluded incident is an episode of the incident memory, found by search
    assert done["writeback"]["memory"]["recorded"] is True
    episode = current_version(platform, fp)
    assert episode is not None and episode.fields["root_cause"] == "payment"
    hits = httpx.get(f"{api_url}/api/v1/memory/search",
                     params={"q": "checkout 5xx HighErrorRate", "service": "checkout"},
                     headers={"Authorization": f"Bearer {TOKEN}"}).json()  # fmt: skip
    assert hits[0]["incident"] == fp and hits[0]["root_cause"] == "payment"
    # resolving in Alertmanager closes the incident
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    body[0]["endsAt"] = now
    assert httpx.post(f"{alertmanager}/api/v2/alerts", json=body).status_code == 200
    closed = incident(api_url, TOKEN,
                      lambda d: d["fingerprint"] == fp and d["status"] == "resolved")  # fmt: skip
    assert closed["resolved_at"] is not None
