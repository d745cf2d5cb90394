"""The incident page at 10k services, timed by the browser itself: server render (request
to first byte) and first contentful paint of /ui/incidents/{fp}, against the JSON route
for the same incident fetched by the same browser. Printed (run with -s), never asserted:
wall-clock figures are for the closing note and BENCHMARKS, not pass/fail."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sgtest import CHROMIUM, chromium, require

from stackgraph.api import create_app
from stackgraph.api.threaded import serve_in_thread
from stackgraph.bench.investigate import generate
from stackgraph.config import Settings
from stackgraph.eval.records import edge_stat_records
from stackgraph.ingest import GraphIngestor
from stackgraph.store import GraphStore

from .conftest import firing, incident

TOKEN = "ui-scale-token"
SERVICES, EDGES, LOADS = 10_000, 50_000, 15


@pytest.fixture
def big(settings: Settings, store: GraphStore) -> Iterator[tuple[str, str]]:
    """10k services, 50k CALLS edges with telemetry; one alert on the busiest caller,
    planned by the real read path and checked by the agent's tool floor."""
    edges, _ = generate(SERVICES, EDGES)
    with GraphIngestor(store, batch_size=10_000, who="test") as writer:
        writer.write(edge_stat_records(edges))
    busiest = Counter(e.client for e in edges).most_common(1)[0][0]
    app = create_app(settings, store=store, token=TOKEN, memory_fn=lambda st: None)
    with serve_in_thread(app) as url:
        body = firing("fp-10k")
        body["alerts"][0]["labels"] = {"alertname": "HighErrorRate", "service": busiest}
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert httpx.post(f"{url}/api/v1/alerts", json=body, headers=auth).is_success
        done = incident(url, TOKEN, lambda d: d["state"] in ("done", "failed"), timeout=300)
        yield url, done["fingerprint"]


NAV = """() => { const n = performance.getEntriesByType('navigation')[0];
  return n.responseStart - n.requestStart; }"""
"""Request to first byte: the server's render, in ms."""
PAINT = """() => new Promise(resolve => {
  new PerformanceObserver((list, seen) => {
    const p = list.getEntriesByName('first-contentful-paint')[0];
    if (p) { seen.disconnect(); resolve(p.startTime); }
  }).observe({type: 'paint', buffered: true});
  setTimeout(() => resolve(null), 10000); })"""
"""First contentful paint after navigation start, in ms (waits for it to be recorded)."""


def test_incident_page_timing_at_10k_services(
    big: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    require(CHROMIUM.is_file(), "chromium (scripts/system-deps.sh)")
    url, fp = big
    with chromium(tmp_path_factory.mktemp("profile")) as context:
        page = context.new_page()
        page.goto(f"{url}/ui/incidents/{fp}")
        page.fill("#token", TOKEN)
        page.click("form.login button")
        page.wait_for_load_state()
        assert page.locator("svg.blame g.node").count() > 1
        api = context.new_page()  # the JSON routes, navigated with the bearer token
        api.set_extra_http_headers({"Authorization": f"Bearer {TOKEN}"})
        server, paint, json_first, graph_first, json_paint = [], [], [], [], []
        for _ in range(LOADS):
            page.goto(f"{url}/ui/incidents/{fp}")
            server.append(float(page.evaluate(NAV)))
            fcp = page.evaluate(PAINT)
            if fcp is not None:
                paint.append(float(fcp))
            for path, into in (("", json_first), ("/graph", graph_first)):
                api.goto(f"{url}/api/v1/incidents/{fp}{path}")
                into.append(float(api.evaluate(NAV)))
            fcp = api.evaluate(PAINT)  # the JSON graph, drawn by chromium as text
            if fcp is not None:
                json_paint.append(float(fcp))
    med: dict[str, Any] = {k: statistics.median(v) for k, v in (
        ("page server render", server), ("page first paint", paint),
        ("JSON detail", json_first), ("JSON graph", graph_first),
        ("JSON graph paint", json_paint)) if v}  # fmt: skip
    base = med["JSON detail"]
    print(f"\n{SERVICES} services, {EDGES} CALLS edges, median of {LOADS} loads:")
    for name, ms in med.items():
        print(f"  {name:>18}: {ms:7.1f} ms  ({ms / base:.2f}x the JSON detail route)")
    assert set(med) >= {"page server render", "JSON detail", "JSON graph"}
