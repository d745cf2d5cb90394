"""`stackgraph demo`, `investigate` and `eval` as a user runs them (real processes)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from sgtest import run_cli


def sg(*args: str, data: Path, ok: bool = True) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, data=data, ok=ok)


def test_demo_then_investigate_json(tmp_path: Path, examples: Path) -> None:
    data = tmp_path / "d"
    demo = sg("demo", "--examples", str(examples), data=data)
    assert "root-cause candidates for an alert on 'checkout'" in demo.stdout
    assert "payment" in demo.stdout and "flux_status" in demo.stdout
    # the agent read the example log files: payment Validated by logs beside Git, and
    # written back as the root cause
    rows = {r.split("│")[2].strip(): r for r in demo.stdout.splitlines() if r.count("│") > 5}
    assert "│ Validated │" in rows["payment"] and "loki_query: supports" in rows["payment"]
    assert "Root cause: payment (Validated" in demo.stdout
    edges = json.loads(sg("graph", "stats", "--json", data=data).stdout)["edges"]
    assert edges["ROOT_CAUSED_BY"] == 1
    # it ends with where to see the incident: the web UI's page for it
    last = demo.stdout.rstrip().splitlines()[-1].strip()
    assert last.startswith("http://127.0.0.1:8080/ui/incidents/"), last
    # --at travels in time: the demo wrote its graph just now, so in January it was empty
    before = sg("investigate", "--service", "checkout", "--at", "2026-01-15T10:05:00Z",
                "--json", data=data)  # fmt: skip
    assert json.loads(before.stdout)["anchor"] is None
    out = sg("investigate", "--service", "checkout", "--hops", "99", "--json", data=data)
    plan = json.loads(out.stdout)
    assert plan["anchor"] == "checkout" and plan["hops"] == 4
    top = plan["candidates"][0]
    assert top["service"] == "payment"
    assert set(top) >= {"service", "score", "signals", "paths", "evidence"}
    assert top["paths"][0] == ["checkout", "payment"]
    assert {e["signal"] for e in top["evidence"]} >= {"telemetry"}
    later = str(int(time.time()) + 60)
    epoch = sg("investigate", "--service", "checkout", "--at", later, "--json", data=data)
    assert json.loads(epoch.stdout)["candidates"][0]["service"] == "payment"
    # the plan carries its program, and the incident stored it (PLANNED_WITH)
    assert plan["program"]["program"] == "default" and plan["program"]["chosen"]["near"]
    assert edges["PLANNED_WITH"] == 1
    # programs as a user handles them: list, show, verify, run
    listed = json.loads(sg("program", "list", "--json", data=data).stdout)
    assert {"default", "latency"} <= {p["name"] for p in listed["playbooks"]}
    shown = sg("program", "show", "after-deploy", data=data).stdout
    assert shown.startswith("program: after-deploy") and "op: changes" in shown
    mine = data.parent / "mine.yaml"
    mine.write_text(shown.replace("after-deploy", "mine").replace("hops: auto", "hops: 1"))
    assert "ok: mine" in sg("program", "verify", str(mine), data=data).stdout
    ran = json.loads(sg("program", "run", str(mine), "--service", "checkout", "--json",
                        data=data).stdout)  # fmt: skip
    assert ran["playbook"] == "mine" and ran["candidates"][0]["service"] == "payment"
    mine.write_text(shown.replace("op: traversal", "op: onset"))
    bad = sg("program", "verify", str(mine), data=data, ok=False)
    assert bad.returncode == 2 and "binding 'traversal': types: takes 1" in bad.stderr


def test_investigate_unknown_service_and_bad_time(tmp_path: Path) -> None:
    data = tmp_path / "d"
    out = sg("investigate", "--service", "ghost", "--json", data=data)
    plan = json.loads(out.stdout)
    assert plan["candidates"] == [] and plan["reason"]
    bad = sg("investigate", "--service", "x", "--at", "yesterday-ish", data=data, ok=False)
    assert bad.returncode != 0 and "--at" in bad.stderr


def test_eval_seeded_json(tmp_path: Path) -> None:
    out = sg("eval", "--dataset", "seeded", "--limit", "4", "--json", data=tmp_path / "d")
    card = json.loads(out.stdout)
    assert card["dataset"] == "seeded" and card["n_cases"] == 4 and len(card["cases"]) == 4
    for scores in card["methods"].values():
        assert all(0.0 <= scores[k] <= 1.0 for k in ("ac1", "ac3", "ac5", "avg5", "mrr"))
    assert "stackgraph" in card["methods"] and "random" in card["methods"]
