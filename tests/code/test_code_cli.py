"""`stackgraph ingest --lanes code` and `stackgraph code search|refs` as a user runs them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import codelane_repos as shop
from ollama_server import ollama_server
from sgtest import run_cli


def sg(
    *args: str, data: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, data=data, env=env, unset=("QDRANT_URL", "OLLAMA_HOST"), ok=False)


def test_ingest_search_refs_and_refusal(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shop.make_repo(tmp_path / "shop")
    proc = sg("ingest", "--lanes", "code", "--repo", str(tmp_path / "shop"), "--json", data=data)
    assert proc.returncode == 1  # the broken file is reported; everything else is written
    assert "services/checkout/app/broken.py:1:10" in proc.stderr
    assert json.loads(proc.stdout)["nodes"]["CodeUnit"]["created"] == 5

    found = sg("code", "search", "charge the customer's credit card", "--json", "--limit", "3",
               data=data)  # fmt: skip
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    assert len(hits) == 3 and {"service", "path", "symbol", "score"} <= set(hits[0])
    assert (hits[0]["symbol"], hits[0]["service"]) == ("create_payment", "payment")

    refs = sg("code", "refs", "checkout", "--json", data=data)
    rows = {r["path"]: r for r in json.loads(refs.stdout)}
    assert rows["services/checkout/app/routers/orders.py"]["endpoints"] == ["POST /api/orders"]
    table = sg("code", "refs", "payment", data=data).stdout
    assert "services/payment/app/main.py" in table and "payments-db" in table

    with ollama_server(dim=1024) as ollama:
        refused = sg("code", "search", "anything", data=data, env={"OLLAMA_HOST": ollama.url})
    assert refused.returncode == 2
    lines = [ln for ln in refused.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "384-d" in lines[0] and "1024-d" in lines[0], refused.stderr


def test_missing_repo_is_one_line(tmp_path: Path) -> None:
    proc = sg("ingest", "--lanes", "code", "--repo", str(tmp_path / "nope"), data=tmp_path / "d")
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: repo path {tmp_path / 'nope'} is not a directory"
