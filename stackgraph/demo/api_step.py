"""Demo step: start the API on a free port, post the example Alertmanager alert, wait for
the incident and print its plan, verified hypotheses and report (no LLM).

The agent's Git tools get the demo repo for every service in it (`agent_repos`, as a
monorepo user would configure), so the deterministic tool floor can check the plan's
change evidence against the real history.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

import httpx
from rich.table import Table

from stackgraph.api import create_app
from stackgraph.api.threaded import serve_in_thread
from stackgraph.config import Settings
from stackgraph.rca.agent import Agent, AgentConfig

from .context import DemoContext

UI_BASE = "http://127.0.0.1:8080"
"""Where `stackgraph serve` listens by default."""


def _with_repos(ctx: DemoContext) -> Settings:
    repo = ctx.repo
    services = repo / "services"
    if not services.is_dir():
        return ctx.settings
    mapped = {p.name: repo for p in sorted(services.iterdir()) if p.is_dir()}
    ctx.console.print(f"agent_repos: {', '.join(mapped)} → {repo}")
    return ctx.settings.model_copy(update={"agent_repos": {**mapped, **ctx.settings.agent_repos}})


def serve_and_investigate(ctx: DemoContext) -> None:
    token = secrets.token_urlsafe(16)
    settings = _with_repos(ctx)
    app = create_app(settings, store=ctx.store, agent=Agent(AgentConfig()), token=token)
    with serve_in_thread(app) as url:
        auth = {"Authorization": f"Bearer {token}"}
        alert_file = ctx.alert_file
        payload = json.loads(alert_file.read_text(encoding="utf-8"))
        r = httpx.post(f"{url}/api/v1/alerts", json=payload, headers=auth, timeout=10)
        ctx.console.print(f"POST /api/v1/alerts ({alert_file.name}) → {r.status_code} {r.json()}")
        fp = payload["alerts"][0]["fingerprint"]
        detail: dict[str, Any] = {}
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            detail = httpx.get(f"{url}/api/v1/incidents/{fp}", headers=auth, timeout=10).json()
            if detail.get("state") in ("done", "failed"):
                break
            time.sleep(0.1)
        _show(ctx, detail)
        ctx.results["incident"] = detail


def show_ui_url(ctx: DemoContext) -> None:
    """Where to look at the demo incident: the records live in the data dir's FalkorDB, so
    `stackgraph serve` on the same data dir shows it under /ui."""
    detail = ctx.results.get("incident") or {}
    fp = detail.get("fingerprint")
    if not fp:
        ctx.console.print("no demo incident to show in the web UI")
        return
    ctx.console.print("see it in the web UI (log in with the token):", markup=False)
    ctx.console.print("  STACKGRAPH_API_TOKEN=... .venv/bin/stackgraph serve", markup=False)
    ctx.console.print(f"  {UI_BASE}/ui/incidents/{fp}", markup=False, highlight=False)


def _show(ctx: DemoContext, detail: dict[str, Any]) -> None:
    plan = detail.get("plan") or {}
    cands = plan.get("candidates") or []
    ctx.console.print(f"incident {detail.get('fingerprint')}: {detail.get('state')}, "
                      f"ending {detail.get('ending')}")  # fmt: skip
    ctx.console.print(f"plan: anchor {plan.get('anchor')}, {len(cands)} candidate(s)"
                      + (f" — {plan.get('reason')}" if plan.get("reason") else ""))  # fmt: skip
    table = Table(title="hypotheses (verified by tools)")
    for col in ("rank", "suspect", "state", "confidence", "evidence"):
        table.add_column(col)
    for h in detail.get("hypotheses", []):
        ev = "; ".join(f"{e['tool']}: {e['verdict']}" for e in h["evidence"])
        table.add_row(str(h["rank"]), h["suspect"], h["state"], f"{h['confidence']:.2f}", ev)
    ctx.console.print(table)
    report = detail.get("report") or {}
    ctx.console.print(report.get("text", "(no report)"), markup=False, highlight=False)
