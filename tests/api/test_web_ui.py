"""The web UI in a real browser: Debian's chromium driven by Playwright, against a real
`stackgraph serve` (uvicorn on 127.0.0.1) whose incident was investigated by the agent's
tool floor (payment Validated by Git and the Kubernetes API, inventory Refuted)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kube_apiserver import FakeKube
from sgtest import CHROMIUM, chromium, require

from stackgraph.api import create_app
from stackgraph.api.threaded import serve_in_thread
from stackgraph.config import Settings
from stackgraph.rca.agent import ToolContext
from stackgraph.rca.model import Alert, Candidate, Plan
from stackgraph.rca.programs import DEFAULT_PROGRAM
from stackgraph.store import GraphStore

from .conftest import firing, incident, kube_args, payment_plan

TOKEN = "ui-test-token"
HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One chromium for the module, with a fresh profile."""
    require(CHROMIUM.is_file(), "chromium (scripts/system-deps.sh)")
    require(importlib.util.find_spec("playwright") is not None, "playwright (.[dev])")
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context


@pytest.fixture
def tab(browser: Any) -> Iterator[Any]:
    """A page with no session (cookies cleared), failing on any script dialog."""
    browser.clear_cookies()
    page = browser.new_page()
    page.dialogs = []
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    yield page
    page.close()


def hostile_plan(store: GraphStore, alert: Alert) -> Plan:
    """payment_plan plus a suspect whose name is markup (names come from telemetry)."""
    plan = payment_plan(store, alert)
    evil = Candidate(HOSTILE, 0.2, {"blame": 0.2}, [["checkout", HOSTILE]])
    program = {**DEFAULT_PROGRAM.to_dict(), "digest": DEFAULT_PROGRAM.digest,
               "chosen": {"near": {"hops": 2}}}  # fmt: skip
    return Plan(plan.anchor, [*plan.candidates, evil], plan.reason, program=program)


@pytest.fixture
def served(
    settings: Settings, platform: GraphStore, payment_repo: Path, payment_kube: FakeKube
) -> Iterator[tuple[str, str]]:
    """The API with one investigated incident: (base URL, incident fingerprint)."""

    def context(alert: Alert, plan: Plan) -> ToolContext:
        return ToolContext(store=platform, alert=alert, plan=plan, at=alert.starts_at,
                           repos={"payment": payment_repo}, **kube_args(payment_kube))  # fmt: skip

    app = create_app(settings, store=platform, plan_fn=hostile_plan, context_fn=context,
                     token=TOKEN, memory_fn=lambda st: None)  # fmt: skip
    with serve_in_thread(app) as url:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert httpx.post(f"{url}/api/v1/alerts", json=firing("fp-ui"), headers=auth).is_success
        done = incident(url, TOKEN, lambda d: d["state"] == "done")
        yield url, done["fingerprint"]


def log_in(tab: Any, url: str, path: str = "/ui/") -> None:
    tab.goto(url + path)
    assert "/ui/login" in tab.url
    tab.fill("#token", TOKEN)
    tab.click("form.login button")
    tab.wait_for_load_state()
    assert "/ui/login" not in tab.url


def test_incident_pages_draw_the_blame_graph_and_take_feedback(
    tab: Any, served: tuple[str, str]
) -> None:
    url, fp = served
    log_in(tab, url)
    row = tab.locator(f"tr[data-fingerprint='{fp}']")
    assert row.count() == 1
    assert "checkout" in row.inner_text() and "payment" in row.inner_text()
    tab.select_option("select[name=status]", "resolved")  # the filter, as a plain GET form
    tab.click("form.filter button")
    tab.wait_for_load_state()
    assert "status=resolved" in tab.url and row.count() == 0
    tab.fill("input[name=q]", "checkout")
    tab.select_option("select[name=status]", "open")
    tab.click("form.filter button")
    tab.wait_for_load_state()
    row.locator("a").click()
    tab.wait_for_load_state()
    assert tab.url.endswith(f"/ui/incidents/{fp}")
    nodes = {n.get_attribute("data-name"): n for n in tab.locator("svg.blame g.node").all()}
    assert {"checkout", "payment", "inventory", HOSTILE} <= set(nodes)
    assert nodes["checkout"].get_attribute("data-role") == "symptom"
    assert nodes["payment"].get_attribute("data-state") == "Validated"
    edge = tab.locator("svg.blame g.edge[data-src='checkout'][data-dst='payment']")
    assert edge.locator("text").text_content() == "err 12.0% · p95 840 ms"
    assert edge.get_attribute("data-source") == "Tempo"
    # bigger blame, bigger node
    radius = {n: float(nodes[n].locator("circle").last.get_attribute("r")) for n in nodes}
    assert radius["payment"] > radius["inventory"]
    # the page draws what the JSON route answers: one source
    auth = {"Authorization": f"Bearer {TOKEN}"}
    graph = httpx.get(f"{url}/api/v1/incidents/{fp}/graph", headers=auth).json()
    assert {n["name"] for n in graph["nodes"]} == set(nodes)
    assert tab.locator("table.plan tr[data-service='payment']").inner_text().count("blame") == 1
    assert tab.locator("ol.timeline li").count() > 0
    # the program that produced the plan, binding by binding, with what `auto` chose
    assert DEFAULT_PROGRAM.digest in tab.locator("#program summary").inner_text()
    steps = tab.locator("#program ol.program li")
    assert steps.count() == len(DEFAULT_PROGRAM.bindings)
    assert "auto:" in (steps.nth(1).text_content() or "") and "khop" in (
        steps.nth(1).text_content() or ""
    )
    # feedback: confirm payment; the page and the JSON API both show it
    assert tab.locator("#feedback-state").inner_text() == "pending"
    tab.fill("input[name=root_cause]", "payment")
    tab.click("#confirm")
    tab.wait_for_load_state()
    assert tab.url.endswith(f"/ui/incidents/{fp}")
    assert tab.locator("#feedback-state").inner_text() == "confirmed"
    detail = httpx.get(f"{url}/api/v1/incidents/{fp}", headers=auth).json()
    assert detail["feedback"] == "confirmed" and detail["root_cause"] == "payment"
    tab.click("#wrong")  # a person changes their mind
    tab.wait_for_load_state()
    assert tab.locator("#feedback-state").inner_text() == "wrong"
    assert httpx.get(f"{url}/api/v1/incidents/{fp}", headers=auth).json()["feedback"] == "wrong"
    assert tab.dialogs == []


def test_service_page_draws_the_neighbourhood_now_and_then(
    tab: Any, served: tuple[str, str]
) -> None:
    url, fp = served
    log_in(tab, url, f"/ui/incidents/{fp}")
    tab.click("svg.blame a:has(g.node[data-name='payment'])")  # the drawing links services
    tab.wait_for_load_state()
    assert tab.url.endswith("/ui/services/payment")
    nodes = {n.get_attribute("data-name") for n in tab.locator("svg.blame g.node").all()}
    assert {"payment", "checkout", "Datastore:payments-db", "ExternalApi:stripe"} <= nodes
    edge = tab.locator("svg.blame g.edge[data-src='checkout'][data-dst='payment']")
    assert edge.locator("text").text_content() == "err 12.0% · p95 840 ms"
    two = tab.url + "?hops=2"
    tab.goto(two)
    assert "inventory" in {n.get_attribute("data-name")
                           for n in tab.locator("svg.blame g.node").all()}  # fmt: skip
    # the time control: before the graph was written, payment did not exist
    tab.fill("input[name=at]", "2000-01-01T00:00:00Z")
    tab.click("form.filter button")
    tab.wait_for_load_state()
    assert "at=2000-01-01" in tab.url
    assert tab.locator("p.error").inner_text().startswith("No service named payment")
    assert tab.locator("svg.blame g.node").count() == 0
    tab.fill("input[name=at]", "not a time")
    tab.click("form.filter button")
    assert "neither epoch seconds nor ISO-8601" in tab.locator("p.error").inner_text()


def test_health_page_counts_sources_and_the_lease(tab: Any, served: tuple[str, str]) -> None:
    url, _ = served
    log_in(tab, url, "/ui/health")
    assert tab.url.endswith("/ui/health")
    services = tab.locator("table.labels tr[data-label='Service'] td").last.inner_text()
    assert int(services) >= 8  # the example catalog
    assert int(tab.locator("table.types tr[data-type='CALLS'] td").last.inner_text()) >= 2
    tempo = tab.locator("table.sources tr[data-source='Tempo']").inner_text()
    assert "telemetry" in tempo and "ago" not in tempo
    assert tab.locator("#lease").inner_text().startswith("free")


def test_unauthenticated_visits_are_refused(tab: Any, served: tuple[str, str]) -> None:
    url, fp = served
    for path in ("/ui/", f"/ui/incidents/{fp}", "/ui/services/payment", "/ui/health"):
        r = httpx.get(url + path)
        assert r.status_code == 303 and r.headers["location"].startswith("/ui/login?next=")
        tab.goto(url + path)
        assert "/ui/login" in tab.url and tab.locator("#token").count() == 1
    r = httpx.post(f"{url}/ui/incidents/{fp}/feedback", data={"verdict": "wrong"})
    assert r.status_code == 403
    # a wrong token is no login
    tab.fill("#token", "not-the-token")
    tab.click("form.login button")
    assert tab.locator("p.error").inner_text() == "wrong token"
    assert not [c for c in tab.context.cookies() if c["name"] == "sg_session"]


def test_session_cookie_and_headers(tab: Any, served: tuple[str, str]) -> None:
    url, fp = served
    log_in(tab, url, f"/ui/incidents/{fp}")
    assert tab.url.endswith(f"/ui/incidents/{fp}")  # back where the visit began
    (cookie,) = [c for c in tab.context.cookies() if c["name"] == "sg_session"]
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    response = tab.request.get(f"{url}/ui/incidents/{fp}")
    csp = response.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp
    # logging out ends the session: the next visit goes to the login form
    tab.click("form.logout button")
    tab.wait_for_load_state()
    assert "/ui/login" in tab.url
    assert not [c for c in tab.context.cookies() if c["name"] == "sg_session"]
    tab.goto(f"{url}/ui/incidents/{fp}")
    assert "/ui/login" in tab.url


def test_forged_post_without_csrf_is_refused(tab: Any, served: tuple[str, str]) -> None:
    url, fp = served
    log_in(tab, url)
    target = f"{url}/ui/incidents/{fp}/feedback"
    # the browser's own session cookie rides along; the CSRF token does not
    for form in ({"verdict": "wrong"}, {"verdict": "wrong", "csrf": "forged"}):
        assert tab.request.post(target, form=form, max_redirects=0).status == 403
    # with the page's own token, a verdict or root cause the API would refuse is refused
    csrf = tab.locator("input[name=csrf]").first.get_attribute("value")
    for form in ({"verdict": "maybe"}, {"verdict": "confirmed", "root_cause": "<b>"}):
        assert tab.request.post(target, form={**form, "csrf": csrf}).status == 422
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert httpx.get(f"{url}/api/v1/incidents/{fp}", headers=auth).json()["feedback"] == "pending"


def test_a_hostile_service_name_is_shown_as_text(tab: Any, served: tuple[str, str]) -> None:
    url, fp = served
    log_in(tab, url, f"/ui/incidents/{fp}")
    node = tab.locator("svg.blame g.node", has=tab.locator(f"text:text-is('{HOSTILE}')"))
    assert node.count() == 1
    assert tab.locator("table.plan").inner_text().count(HOSTILE) == 2  # name and top path
    assert tab.locator("img").count() == 0  # no element was made from the name
    assert tab.dialogs == []


def test_chromium_is_the_debian_one() -> None:
    """make test must not skip these: with CI=true a missing chromium fails (require)."""
    if os.environ.get("CI", "").lower() == "true":
        assert CHROMIUM.is_file()
