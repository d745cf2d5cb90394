"""Learning from feedback through `serve`: every investigation becomes a trajectory,
labelled when feedback comes; `evolve` mines them and gates each proposal on a sandbox
copy of the graph (a no-op is rejected, the live knowledge untouched); promoted knowledge
changes what the read path plans with and what the agent's floor checks, and says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import httpx

from stackgraph.api import create_app
from stackgraph.api.threaded import serve_in_thread
from stackgraph.config import Settings
from stackgraph.eval.evolution import evolve
from stackgraph.ingest import GraphIngestor
from stackgraph.memory.knowledge import Item, live, promotion_records, shipped, trajectories
from stackgraph.store import GraphStore

from .conftest import incident
from .test_escalation import on_web, shop

TOKEN = "knowledge-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SIG = "HighErrorRate:web"


def investigate_and_confirm(url: str, fp: str, cause: str | None) -> dict[str, Any]:
    assert httpx.post(f"{url}/api/v1/alerts", json=on_web(fp), headers=AUTH).is_success
    done = incident(url, TOKEN, lambda d: d["fingerprint"] == fp and d["state"] == "done")
    if cause is not None:
        body = {"verdict": "confirmed", "root_cause": cause}
        r = httpx.post(f"{url}/api/v1/incidents/{fp}/feedback", json=body, headers=AUTH)
        assert r.is_success, r.text
    return done


def stored(store: GraphStore, fp: str) -> Any:
    for _ in range(50):  # the hook writes after the incident is listed done
        found = [t for t in trajectories(store) if t.fingerprint == fp]
        if found and (found[0].label != "pending"):
            return found[0]
        time.sleep(0.1)
    return next(t for t in trajectories(store) if t.fingerprint == fp)


def test_trajectories_evolve_and_knowledge_in_use(settings: Settings, store: GraphStore) -> None:
    shop(store, failing=0.12)
    settings = settings.model_copy(update={"api_correlation_window_s": 0})  # one per alert
    app = create_app(settings, store=store, token=TOKEN, memory_fn=lambda st: None)
    with serve_in_thread(app) as url:
        for fp in ("k1", "k2", "k3"):
            assert investigate_and_confirm(url, fp, "payment")["conclusion"] == "payment"
        labelled = [stored(store, fp) for fp in ("k1", "k2", "k3")]
        assert {t.label for t in labelled} == {"correct"}
        t = labelled[0]
        assert t.signature == SIG and t.root_cause == "payment" and t.program == "default"
        assert t.leads[0] == "payment" and t.steps[0].tool == "query_stack_graph"
        assert any(s.verdict == "supports" and s.suspect == "payment" for s in t.steps)

        # evolve: the first run reads the system profile (K1) off the world-model into a
        # version of its own; the floor's check that found payment each time is proposed as
        # the signature's skeleton and changes nothing here, so the strict clause rejects it
        first = evolve(store, settings)
        assert first["profile_refreshed"] is True and first["knowledge_after"] == 1
        profile = {i.id: i.text for i in live(store).items if i.tier == "K1"}
        assert "hot paths" in profile["K1:profile:hot"] and "payment" in profile["K1:profile:hot"]
        before = json.dumps(live(store).to_dict(), sort_keys=True)
        report = evolve(store, settings)
        assert report["trajectories"] == 3 and report["admitted"] == 0
        assert report["profile_refreshed"] is False
        ids = {v["proposal"]["item"]["id"]: v for v in report["verdicts"]}
        skeleton = ids[f"K2:skeleton:{SIG}"]
        assert skeleton["inner"]["passed"] is False and "no better" in skeleton["inner"]["why"]
        assert json.dumps(live(store).to_dict(), sort_keys=True) == before
        assert not [k for k in store.conn.keys(f"{settings.graph}_sandbox_*")]  # dropped

        # knowledge in use: a promoted anti-pattern and program choice for this signature
        k = live(store).with_items([
            *live(store).items,
            Item(f"K3:rule:{SIG}:query_stack_graph", "rule", "not here", SIG, "-",
                 {"tool": "query_stack_graph"}),
            Item(f"K3:program:{SIG}", "program", "errors playbook", SIG,
                 data={"program": "errors"}),
        ], "test")  # fmt: skip
        with GraphIngestor(store, who="test") as writer:
            writer.write(promotion_records(k))
        time.sleep(0)  # a fresh app reads the live knowledge anew
    app = create_app(settings, store=store, token=TOKEN, memory_fn=lambda st: None)
    with serve_in_thread(app) as url:
        done = investigate_and_confirm(url, "k4", None)
    program = done["plan"]["program"]
    assert program["program"] == "errors" and program["knowledge"] == [f"K3:program:{SIG}"]
    assert any("floor skipped query_stack_graph" in e for e in done["events"]), done["events"]
    used = stored(store, "k4").knowledge
    assert f"K3:program:{SIG}" in used and f"K3:rule:{SIG}:query_stack_graph" in used

    # the same, as a user sees it from the command line
    def sg(*args: str) -> str:
        env = {k: v for k, v in os.environ.items() if not k.startswith("STACKGRAPH_")}
        env |= {"STACKGRAPH_GRAPH": settings.graph, "STACKGRAPH_DATA_DIR": str(settings.data_dir),
                "STACKGRAPH_FALKORDB_URL": str(settings.falkordb_url)}  # fmt: skip
        proc = subprocess.run([sys.executable, "-m", "stackgraph", *args], capture_output=True,
                              text=True, env=env, timeout=300)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    rows = json.loads(sg("knowledge", "list", "--json"))
    assert [(r["version"], bool(r["live"])) for r in rows] == [(2, True), (1, False), (0, False)]
    assert f"+ K3:rule:{SIG}:query_stack_graph" in sg("knowledge", "diff", "1", "2")
    assert "version 3 is live" in sg("knowledge", "revert", "0")
    assert json.loads(sg("knowledge", "show", "--json"))["items"] == shipped().to_dict()["items"]
    lines = sg("trajectories", "export", "--label", "correct").splitlines()
    assert sorted(json.loads(x)["fingerprint"] for x in lines) == ["k1", "k2", "k3"]
    dry = json.loads(sg("evolve", "--dry-run", "--json"))
    assert dry["dry_run"] is True and dry["admitted"] == 0 and dry["knowledge_after"] == 3
