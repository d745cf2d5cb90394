"""`stackgraph eval e2e`: incidents replayed through the real API (serve's app, its workers
and job stream), a real Prometheus and real Git repositories, then scored."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from sgtest import require

from stackgraph.api.app import plan_from
from stackgraph.api.schemas import AlertmanagerWebhook
from stackgraph.config import Settings
from stackgraph.eval.alerting import AlertTime
from stackgraph.eval.datasets.model import Case, ChangeEvent
from stackgraph.eval.e2e import (
    DISTRACTOR_LEAD_S,
    Outcome,
    arm_metrics,
    build_world,
    ece,
    ece_if_calibrated,
    markdown,
    pick_distractor,
    run_e2e,
    webhook,
)
from stackgraph.eval.e2e.world import write_repo
from stackgraph.eval.harness import evaluate
from stackgraph.eval.replay import Replayer, case_alert
from stackgraph.eval.seeded import load_seeded
from stackgraph.rca import Alert
from stackgraph.store import GraphStore

T0 = 1_767_225_600.0


# -- scoring ---------------------------------------------------------------------------


def test_ece_is_the_weighted_gap_between_confidence_and_accuracy_per_bin() -> None:
    assert ece([]) is None
    # one bin (0.9): confidence 0.9, half right -> 0.4
    assert ece([(0.9, True), (0.9, False)]) == 0.4
    # two bins, each perfectly calibrated at its extreme: 0.05 off each, half the weight each
    assert ece([(0.05, False), (0.95, True)]) == pytest.approx(0.05)
    # a confidence of 1 is in the last bin, not an eleventh; 0.003 right is almost 1 off
    assert ece([(1.0, True), (0.003, True)]) == pytest.approx(0.4985)


def test_an_ece_is_read_against_what_calibrated_confidence_would_show() -> None:
    """Twenty conclusions at 0.5: even if each is right half the time, ten bins of them show
    an ECE well above zero. A measured ECE of 0 is as good as any draw; one of 0.5 (all
    right, or all wrong, at 0.5) is beyond nearly every draw. The same conclusions give the
    same figures."""
    halves = [0.5] * 20
    null = ece_if_calibrated(halves, 0.0)
    assert null is not None and 0.05 < null["mean"] < null["p95"] < 0.5 and null["p"] == 1.0
    beyond = ece_if_calibrated(halves, 0.5)
    assert beyond is not None and beyond["p"] < 0.01
    assert ece_if_calibrated(halves, 0.0) == null
    assert ece_if_calibrated([], None) is None
    sure = ece_if_calibrated([1.0] * 20, 0.0)  # certain and right: nothing to draw
    assert sure == {"mean": 0.0, "p95": 0.0, "p": 1.0}


def _outcome(
    arm: str,
    conclusion: str | None,
    state: str | None = None,
    confidence: float | None = None,
    distractor: str | None = None,
) -> Outcome:
    return Outcome(
        case_id=f"c-{conclusion}-{arm}", fault_type="cpu", root_cause="db", arm=arm,
        alert=AlertTime(T0, "detected", "errors"), plan_ranking=["db", "api", "web"],
        state="done", ending="concluded" if conclusion else "insufficient_evidence",
        conclusion=conclusion, conclusion_state=state, confidence=confidence, tool_calls=4,
        seconds=1.0, floor=True, distractor=distractor,
    )  # fmt: skip


def test_arm_measures_follow_their_definitions() -> None:
    outcomes = [
        _outcome("clean", "db", "Validated", 0.9),
        _outcome("clean", "api", "Validated", 0.8),
        _outcome("clean", "db", "Supported", 0.4),
        _outcome("clean", None),
    ]
    m = arm_metrics(outcomes)
    assert m["cases"] == 4 and m["plan_ac1"] == 1.0
    assert m["coverage"] == 0.75 and m["conclusion_accuracy"] == 0.5
    assert m["conclusion_precision"] == pytest.approx(2 / 3, abs=1e-4)
    assert m["validated"] == 2 and m["validated_precision"] == 0.5
    assert m["distractor_concluded"] is None and m["replay_plan_ac1"] is None
    ci = m["intervals"]
    assert ci["validated_precision"] == pytest.approx((0.0945, 0.9055), abs=1e-4)  # 1 of 2
    assert ci["plan_ac1"] == pytest.approx((0.5101, 1.0), abs=1e-4)  # 4 of 4
    assert ci["distractor_concluded"] is None
    arm = [_outcome("distractor", "api", "Supported", 0.3, distractor="api"),
           _outcome("distractor", "db", "Supported", 0.3, distractor="web")]  # fmt: skip
    assert arm_metrics(arm)["distractor_concluded"] == 0.5


# -- the alert as Alertmanager sends it ------------------------------------------------


def test_the_webhook_is_alertmanagers_payload_of_the_replays_alert() -> None:
    case = load_seeded()[0]
    alert = case_alert(case, AlertTime(T0 + 75.5, "detected", "errors"))
    body = webhook(alert, external_url="http://am:9093", generator_url="http://prom/graph")
    parsed = AlertmanagerWebhook.model_validate_json(AlertmanagerWebhook(**body).model_dump_json())
    assert parsed.version == "4" and parsed.groupLabels == {
        "alertname": "HighErrorRate", "service": case.symptom_service}  # fmt: skip
    got = AlertmanagerWebhook(**body).alerts[0].to_alert()
    assert got.labels == alert.labels and got.fingerprint == alert.fingerprint
    assert got.starts_at == pytest.approx(T0 + 75.5)
    assert body["alerts"][0]["startsAt"] == "2026-01-01T00:01:15.500Z"


# -- the replayed clock (the one product change) ---------------------------------------


def test_api_investigate_at_fired_plans_as_of_the_alerts_firing(
    settings: Settings, store: GraphStore
) -> None:
    alert = Alert({"service": "checkout"}, starts_at=T0, fingerprint="x")
    fired = plan_from(settings.model_copy(update={"api_investigate_at": "fired"}))(store, alert)
    assert fired.at == T0 and fired.window == (T0 - 300.0, T0)
    before = time.time()
    received = plan_from(settings)(store, alert)  # the default: when the worker plans
    assert received.at is not None and received.at >= before


# -- the world: monorepo, distractor -------------------------------------------------


def test_the_monorepo_has_one_commit_per_release_in_its_folder_at_its_time(
    tmp_path: Path,
) -> None:
    releases = [ChangeEvent("cart", "v2", T0 - 600), ChangeEvent("api", "v7", T0 - 60)]
    repo, versioned = write_repo(tmp_path, ["api", "cart", "web"], releases, T0 - 86_400)

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              check=True).stdout.strip()  # fmt: skip

    assert git("log", "--format=%ct", "--", "services/cart").split() == [
        str(int(T0 - 600)), str(int(T0 - 86_400))]  # fmt: skip
    assert git("log", "--format=%ct", "--", "services/web").split() == [str(int(T0 - 86_400))]
    sha = git("log", "-1", "--format=%H", "--", "services/api")
    assert [(c.service, c.version) for c in versioned] == [
        ("cart", f"v2+{git('log', '-1', '--format=%H', '--', 'services/cart')[:12]}"),
        ("api", f"v7+{sha[:12]}")]  # fmt: skip


def test_the_distractor_is_a_service_the_fault_did_not_reach() -> None:
    for case in load_seeded():
        fired = T0 + 7200 * 100  # any time after the alert window: the whole fault counts
        d = pick_distractor(case, fired)
        assert d is not None and d == pick_distractor(case, fired)  # deterministic
        assert d.service not in (case.root_cause, case.symptom_service)
        assert d.at == fired - DISTRACTOR_LEAD_S
        # every (transitive) caller of the root sees its latency rise in the seeded set
        callers, frontier = set(), {case.root_cause}
        while frontier:
            frontier = {e.client for e in case.call_edges if e.server in frontier} - callers
            callers |= frontier
        assert d.service not in callers, (case.case_id, d)
        assert d.healthy


def test_the_world_holds_the_releases_the_commits_and_the_distractor(
    settings: Settings, store: GraphStore, tmp_path: Path
) -> None:
    case = load_seeded()[1]  # shop-02: the root cause is released 10 min before the fault
    at = case.inject_time + 120
    d = pick_distractor(case, at)
    assert d is not None
    # no Prometheus here: the telemetry lane fails (a note); catalog and change lanes run
    replayer = Replayer(store, settings.model_copy(update={"prometheus_url": "http://127.0.0.1:9"}))
    try:
        _, notes = build_world(replayer, store, case, at, tmp_path, d)
    finally:
        replayer.close()
    assert any("telemetry" in n or "Prometheus" in n for n in notes)
    rows = store.read(
        "MATCH (p:Deploy)-[:DEPLOYED]->(s:Service) OPTIONAL MATCH (p)-[:CHANGED]->(c:Change)"
        " RETURN s.name AS service, p.deployed_at AS at, c.committed_at AS committed"
    )
    got = sorted((r["service"], r["at"], r["committed"]) for r in rows)
    want = sorted([*((c.service, c.at, c.at) for c in case.changes), (d.service, d.at, d.at)])
    assert got == want  # each release's Deploy is linked to its commit, at its time
    changed = store.read(
        "MATCH (c:Change)-[:CHANGED]->(s:Service {name: $s}) RETURN c.committed_at AS t",
        {"s": d.service},
    )
    assert d.at in [r["t"] for r in changed]


# -- the whole path ------------------------------------------------------------------


def test_e2e_on_seeded_scores_real_incidents(settings: Settings, store: GraphStore) -> None:
    require(all(shutil.which(b) for b in ("prometheus", "promtool")), "Debian prometheus")
    require(shutil.which("git") is not None, "git")
    card = run_e2e("seeded", None, store, settings=settings, limit=3)
    assert not card["skipped"], card["skipped"]
    assert "no LLM" in card["mode"] and card["n_cases"] == 3
    incidents = card["incidents"]
    assert [i["arm"] for i in incidents].count("clean") == 3
    assert [i["arm"] for i in incidents].count("distractor") == 3
    assert all(i["floor"] and i["state"] == "done" for i in incidents)
    assert all(i["tool_calls"] > 0 and i["seconds"] > 0 for i in incidents)
    # the API planned as of the alert's firing (the replayed clock), not the wall clock
    assert all(i["plan_window"][1] == i["alert"]["fired_at"] for i in incidents)
    clean = [i for i in incidents if i["arm"] == "clean"]
    m = card["arms"]["clean"]
    assert m["conclusions"] >= 1
    share = lambda k: pytest.approx(k / 3, abs=1e-4)  # noqa: E731  (the card rounds to 4)
    assert m["coverage"] == share(sum(i["ending"] == "concluded" for i in clean))
    assert m["conclusion_accuracy"] == share(sum(i["right"] for i in clean))
    assert m["plan_ac1"] == share(sum(i["plan_rank"] == 1 for i in clean))
    # the agent's Git tools read the case's monorepo at the replayed time: shop-02's root
    # cause was released 10 minutes before its fault, and git_log supports it
    (shop02,) = [i for i in clean if i["case_id"] == "shop-02"]
    assert shop02["root_cause_evidence"]["git_log:default"].startswith("supports:"), shop02
    assert shop02["root_cause_state"] in {"Supported", "Validated", "Refuted"}
    # what each conclusion rested on: the checks that judged it, with the tool's reason
    for i in clean:
        said = i["conclusion_evidence"].values()
        assert bool(said) == (i["conclusion"] is not None), i
        assert any(v.startswith("supports: ") and len(v) > 12 for v in said) or not said, i
        # the rivals it was chosen among: the conclusion is the first, as the agent ranked
        held = [h[0] for h in i["hypotheses"]]
        assert i["conclusion"] is None or held[0] == i["conclusion"], i
        assert i["root_cause_state"] is None or i["root_cause"] in held, i
    # the distractor arm measured: a service neither root cause nor symptom, scored
    arm = [i for i in incidents if i["arm"] == "distractor"]
    assert card["arms"]["distractor"]["distractor_cases"] == 3
    symptom = {c.case_id: c.symptom_service for c in load_seeded()}
    assert all(i["distractor"] not in (i["root_cause"], symptom[i["case_id"]]) for i in arm)
    assert all(i["distractor_healthy"] for i in arm)  # seeded always has a service in band
    concluded = share(sum(i["conclusion"] == i["distractor"] for i in arm))
    assert card["arms"]["distractor"]["distractor_concluded"] == concluded
    assert card["targets"]["distractor_concluded"]["value"] == concluded
    # the graph the API read ranks, with `stackgraph eval`'s windows, as the plain replay
    plain = evaluate("seeded", None, store, settings=settings, limit=3)
    ranks = {c["case_id"]: c["ranks"]["stackgraph"] for c in plain["cases"]}
    assert {i["case_id"]: i["replay_plan_rank"] for i in clean} == ranks
    text = markdown(card)
    assert "| clean | 3 |" in text and "  - 95% intervals (Wilson): plan ac1 " in text
    # feedback: each clean incident confirmed once scored, its trajectory carried on, so an
    # incident's stated confidence was calibrated by exactly the earlier cases' clean
    # conclusions on the same evidence (never by its own case's label)
    assert any(n.startswith("feedback: each clean incident") for n in card["notes"])
    for i, inc in enumerate(incidents):
        earlier = [
            e for e in incidents[:i]
            if e["arm"] == "clean" and e["ending"] == "concluded" and e["case_id"] != inc["case_id"]
            and round(e["evidence_confidence"], 3) == round(inc["evidence_confidence"] or -1, 3)
            and e["conclusion_state"] == inc["conclusion_state"]
        ]  # fmt: skip
        assert inc["calibrated_on"] == (len(earlier) if inc["ending"] == "concluded" else 0)
        if inc["ending"] == "concluded" and not earlier:
            assert inc["confidence"] == inc["evidence_confidence"]


def shop01_twice(path: Path) -> list[Case]:
    """seeded's shop-01 (which the floor concludes), then the same incident again."""
    case = load_seeded()[0]
    return [case, dataclasses.replace(case, case_id="shop-01-again")]


def test_feedback_on_one_incident_calibrates_the_next(
    settings: Settings, store: GraphStore, tmp_path: Path
) -> None:
    require(all(shutil.which(b) for b in ("prometheus", "promtool")), "Debian prometheus")
    card = run_e2e("twice", tmp_path, store, settings=settings, adapter=f"{__name__}:shop01_twice",
                   distractor=False)  # fmt: skip
    first, again = card["incidents"]
    assert first["ending"] == again["ending"] == "concluded", card["incidents"]
    e = first["evidence_confidence"]
    assert again["evidence_confidence"] == e  # the same evidence, the same tools
    assert first["calibrated_on"] == 0 and first["confidence"] == e
    assert again["calibrated_on"] == 1
    assert again["confidence"] == pytest.approx((int(first["right"]) + 2 * e) / 3, abs=1e-4)
    cold = run_e2e("twice", tmp_path, store, settings=settings, adapter=f"{__name__}:shop01_twice",
                   distractor=False, feedback=False)  # fmt: skip
    assert [i["calibrated_on"] for i in cold["incidents"]] == [0, 0]
    assert any("feedback: none" in n for n in cold["notes"])


def test_a_missing_dataset_folder_is_a_clear_error(settings: Settings, store: GraphStore) -> None:
    from stackgraph.eval.datasets import DatasetError

    with pytest.raises(DatasetError, match="does not exist"):
        run_e2e("nezha", Path("/no/such/folder"), store, settings=settings)
    with pytest.raises(DatasetError, match="needs --path"):
        run_e2e("nezha", None, store, settings=settings)


def test_an_escalated_incident_is_scored_on_the_plan_it_started_from() -> None:
    from stackgraph.eval.e2e.run import first_plan

    attempts = [{"top": ["a", "b", "c"]}, {"top": ["d", "e", "a"]}]
    final = {"candidates": [{"service": s} for s in ("d", "e", "a", "b", "c")],
             "program": {"attempts": attempts}}  # fmt: skip
    assert first_plan(final) == ["a", "b", "c", "d", "e"]
    assert first_plan({"candidates": [{"service": "x"}]}) == ["x"]
