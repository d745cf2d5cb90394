"""The replay's parts that need no Prometheus: alert timing, the files handed to the lanes,
change-aware baselines, adapters by name, and the scorecard's honesty."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from stackgraph import cypher
from stackgraph.config import Settings
from stackgraph.eval.alerting import FALLBACK_DELAY_S, FOR_S, AlertTime, detect_alert
from stackgraph.eval.baselines import BASELINES, inputs_of, released_first
from stackgraph.eval.datasets import DatasetError
from stackgraph.eval.datasets.model import Case, ChangeEvent
from stackgraph.eval.harness import adapter_from, load, methods_for
from stackgraph.eval.lane_files import catalog_doc, helm_releases, write_yaml
from stackgraph.eval.replay import case_alert
from stackgraph.eval.scorecard import CaseResult, markdown, metrics, scorecard
from stackgraph.eval.seeded import load_seeded
from stackgraph.ingest import run_lanes
from stackgraph.rca.programs import BUILTIN, DEFAULT_PROGRAM, fusion_roles
from stackgraph.store import GraphStore

T0 = 1_767_225_600.0


class Points:
    """A MetricsSource over fixed points per (service, kind): the unit-test double."""

    def __init__(self, data: dict[tuple[str, str], list[tuple[float, float]]]) -> None:
        self.data = data

    def kinds(self, service: str, start: float, end: float) -> Sequence[str]:
        return sorted(k for s, k in self.data if s == service)

    def points(
        self, service: str, kind: str, start: float, end: float
    ) -> Sequence[tuple[float, float]]:
        return [(t, v) for t, v in self.data.get((service, kind), []) if start <= t <= end]


def flat_then(level: float, from_t: float, until: float = T0 + 900) -> list[tuple[float, float]]:
    """0.01 ± jitter every 15 s from T0-1200, `level` from `from_t` to `until`."""
    out = []
    for i, t in enumerate(np.arange(T0 - 1200, T0 + 1200, 15.0)):
        base = 0.01 * (1 + 0.05 * ((i % 5) - 2))
        out.append((float(t), level if from_t <= t < until else base))
    return out


BASELINE = (T0 - 1200, T0)


def test_the_alert_fires_a_minute_after_the_symptom_leaves_its_band() -> None:
    src = Points(
        {("web", "errors"): flat_then(0.2, T0 + 45), ("web", "latency"): flat_then(0.01, 0)}
    )
    fired = detect_alert(src, "web", T0, T0 + 600, BASELINE)
    assert fired == AlertTime(T0 + 45 + FOR_S, "detected", "errors", T0 + 45)


def test_a_blip_shorter_than_for_does_not_fire() -> None:
    src = Points({("web", "errors"): flat_then(0.2, T0 + 45, until=T0 + 90)})
    fired = detect_alert(src, "web", T0, T0 + 600, BASELINE)
    assert fired == AlertTime(T0 + FALLBACK_DELAY_S, "in band")


def test_no_symptom_series_and_the_next_fault_bound_the_alert() -> None:
    assert detect_alert(Points({}), "web", T0, T0 + 600, BASELINE).how == "no signal"
    late = Points({("web", "errors"): flat_then(0.2, T0 + 500)})
    fired = detect_alert(late, "web", T0, T0 + 540, BASELINE)  # would fire at +560
    assert fired.how == "in band" and fired.fired_at == T0 + FALLBACK_DELAY_S
    assert detect_alert(late, "web", T0, T0 + 60, BASELINE).fired_at == T0 + 60


def test_the_alert_never_names_the_root_cause() -> None:
    for case in load_seeded():
        alert = case_alert(case, AlertTime(case.inject_time + 60, "detected", "errors"))
        assert alert.labels["service"] == case.symptom_service
        assert alert.starts_at == case.inject_time + 60
        text = json.dumps([dict(alert.labels), dict(alert.annotations)])
        if case.root_cause != case.symptom_service:
            assert case.root_cause not in text


def test_releases_reach_the_graph_through_the_change_lane(
    store: GraphStore, settings: Settings, tmp_path: Path
) -> None:
    changes = [ChangeEvent("cart", "1.0", T0 - 7200), ChangeEvent("cart", "1.1", T0 - 300),
               ChangeEvent("payment", "3.2", T0 - 60)]  # fmt: skip
    dump = write_yaml(tmp_path / "flux" / "hr.yaml", helm_releases(changes))
    report, failures = run_lanes(store, settings, "change", manifests=dump.parent)
    assert not failures and not report.rejected
    rows = store.read(cypher.render("export_nodes", label="Deploy"), {"after": -1, "limit": 10})
    got = sorted((r["p"]["service"], r["p"]["deployed_at"], r["p"]["chart_version"]) for r in rows)
    assert got == [
        ("cart", T0 - 7200, "1.0"), ("cart", T0 - 300, "1.1"), ("payment", T0 - 60, "3.2")
    ]  # fmt: skip
    assert catalog_doc({"a": "high"}) == {"services": [{"name": "a", "criticality": "high"}]}


def test_change_aware_variants_put_released_services_first() -> None:
    case = load_seeded()[0]
    base = BASELINES["largest-anomaly"](case)
    released = {c.service for c in case.changes}
    ranked = released_first(BASELINES["largest-anomaly"])(case)
    assert sorted(ranked) == sorted(base)
    assert set(ranked[: len(released)]) == released
    assert inputs_of("microrca+releases") == ("Prometheus series", "call graph (Tempo)", "releases")
    assert "baro+releases" in methods_for(load_seeded())


def _adapter(path: Path) -> list[Case]:
    return load_seeded(path)[:2]


def test_a_dataset_adapter_by_module_and_function() -> None:
    seeded = Path(sys.modules["stackgraph.eval.seeded"].__file__ or "").parent / "data" / "seeded"
    cases = load("mine", seeded, adapter=f"{__name__}:_adapter")
    assert len(cases) == 2
    for spec, says in (("nocolon", "module:function"), ("no_such_mod:f", "No module"),
                       (f"{__name__}:missing", "missing")):  # fmt: skip
        with pytest.raises(DatasetError, match=says):
            adapter_from(spec)
    with pytest.raises(DatasetError, match="unknown dataset 'nope'"):
        load("nope", seeded)
    with pytest.raises(DatasetError, match="needs --path"):
        load("nezha", None)


def test_scorecard_lists_fail_open_plans_and_each_case_rank() -> None:
    cases = load_seeded()[:2]
    results = [
        CaseResult(cases[0], {"stackgraph": [cases[0].root_cause], "random": ["x"]},
                   {"stackgraph": 0.1, "random": 0.0},
                   AlertTime(cases[0].inject_time + 90, "detected", "errors")),
        CaseResult(cases[1], {"stackgraph": sorted(cases[1].services), "random": ["x"]},
                   {"stackgraph": 0.1, "random": 0.0}, AlertTime(0.0, "no signal"),
                   fail_open="no Service matches"),
    ]  # fmt: skip
    card = scorecard("seeded", results, skipped=[{"case_id": "z", "reason": "broken"}])
    assert card["fail_open"] == [{"case_id": cases[1].case_id, "reason": "no Service matches"}]
    assert card["cases"][0]["ranks"] == {"stackgraph": 1, "random": 0}
    assert card["cases"][0]["alert"] == {"how": "detected", "signal": "errors", "delay_s": 90.0}
    assert card["alerts"]["detected"] == 1 and card["alerts"]["no_signal"] == 1
    assert card["inputs"]["random"] == ["service list"]
    text = markdown(card)
    assert "Fail-open plans: 1" in text and "no Service matches" in text
    assert "Skipped cases: 1" in text
    # one of two right: Wilson's interval at 95%, and the paired count against random
    assert card["methods"]["stackgraph"]["ac1_ci"] == pytest.approx((0.0945, 0.9055), abs=1e-4)
    assert card["methods"]["random"]["ac1_ci"] == pytest.approx((0.0, 0.6576), abs=1e-4)
    assert card["paired"] == {"random": {"wins": 1, "losses": 0, "p": 0.5}}
    assert "| stackgraph | 50.0 | 9.4–90.5 |" in text
    assert "- random: 1 only stackgraph, 0 only random, p = 0.500" in text


def test_a_paired_comparison_needs_more_than_chance() -> None:
    from stackgraph.eval.intervals import better_p, wilson

    assert wilson(0, 0) is None
    assert wilson(16, 18) == pytest.approx((0.6721, 0.9690), abs=1e-4)
    # five cases only one method got right, none the other: 1/32, beyond chance at 5%
    assert better_p(5, 0) == pytest.approx(1 / 32)
    assert better_p(3, 0) > 0.05 and better_p(0, 0) == 1.0 and better_p(2, 4) > 0.5


def test_accuracy_within_attempts_and_the_programs_that_resolved_a_case() -> None:
    from stackgraph.eval.harness import composed_records

    cases = load_seeded()[:2]
    rc0, rc1 = cases[0].root_cause, cases[1].root_cause
    composed = {"program": "metrics-only", "bindings": []}

    def attempt(stage: int, top: list[str], ok: bool, **more: object) -> dict[str, object]:
        cost = {"seconds": 0.1 * stage, "graph_rows": 0, "metric_points": 3}
        return {"stage": stage, "program": f"p{stage}", "digest": f"d{stage}", "why": "",
                "top": top, "sufficient": ok, "said": [], "cost": cost, **more}  # fmt: skip

    results = [
        CaseResult(cases[0], {"stackgraph": [rc0]}, {"stackgraph": 0.1},
                   attempts=[attempt(1, [rc0], True)]),
        CaseResult(cases[1], {"stackgraph": ["x", "y", "z", rc1]}, {"stackgraph": 0.1},
                   attempts=[attempt(1, ["x", "y", "z"], False),
                             attempt(2, [rc1], True, composed=composed)]),
    ]  # fmt: skip
    card = scorecard("seeded", results)
    at = card["attempts"]
    assert (at["acc@3,1"], at["acc@3,2"], at["default_ac3"]) == (0.5, 1.0, 0.5)
    assert at["default_ac@6"] == 1.0  # its fourth candidate: the bar for a second attempt
    assert at["stages"]["2"] == {"attempts": 1, "sufficient": 1, "mean_seconds": 0.2,
                                 "mean_graph_rows": 0.0, "mean_metric_points": 3.0}  # fmt: skip
    assert "Accuracy@3,2 100.0" in markdown(card)
    nodes = composed_records("seeded", results).nodes
    assert [(n.label, n.key, n.props["origin"]) for n in nodes] == [
        ("Program", {"digest": "d2"}, "composed")
    ]
    assert json.loads(nodes[0].props["admission_json"])["case"] == cases[1].case_id


def test_scorecard_metrics() -> None:
    m = metrics([["a", "b"], ["b", "a"], ["c", "d"]], ["a", "a", "x"])
    assert m["ac1"] == pytest.approx(1 / 3, abs=1e-3)
    assert m["ac3"] == pytest.approx(2 / 3, abs=1e-3)
    assert m["mrr"] == pytest.approx((1 + 0.5) / 3, abs=1e-3)


def test_the_recorded_alert_stands_in_where_the_symptom_shows_nothing() -> None:
    quiet = Points({("web", "latency"): flat_then(0.01, 0)})
    assert detect_alert(quiet, "web", T0, T0 + 600, BASELINE, recorded=T0 + 200) == AlertTime(
        T0 + 200, "recorded"
    )
    assert detect_alert(quiet, "web", T0, T0 + 600, BASELINE, recorded=T0 + 900).how == "in band"
    loud = Points({("web", "errors"): flat_then(0.2, T0 + 45)})
    assert detect_alert(loud, "web", T0, T0 + 600, BASELINE, recorded=T0 + 200).how == "detected"


def test_ablation_refuses_the_same_votes_without_each_scorer() -> None:
    from stackgraph.eval.ablation import ablations
    from stackgraph.rca import Candidate, Plan

    def cand(name: str, **votes: float) -> Candidate:
        return Candidate(name, 0.0, {"topology": 0.5, **votes})

    sources, priors = fusion_roles(DEFAULT_PROGRAM, BUILTIN)
    assert "blame" in priors and "blame" not in sources  # structure breaks ties
    plan = Plan("web", [cand("db", anomaly=0.9, onset=1.0),
                        cand("api", anomaly=0.5, telemetry=0.4),
                        cand("web", telemetry=0.9, onset=2.0)],
                program={"fusion": {"sources": sources, "priors": priors}})  # fmt: skip
    got = ablations(plan, ["api", "cache", "db", "web"])
    assert got["anomaly alone"] == ["db", "api", "web", "cache"]  # outside the plan: last
    assert got["onset alone"] == ["web", "db", "api", "cache"]
    assert got["stackgraph-telemetry"][:2] == ["db", "web"]  # anomaly + onset
    assert got["stackgraph-onset"][0] == "api"  # anomaly + telemetry
    assert set(got) == {f"stackgraph-{v}" for v in sources} | {f"{v} alone" for v in sources}


def test_fusion_counts_each_data_source_once() -> None:
    from stackgraph.rca.fusion import by_source, rrf
    from stackgraph.rca.scorers import Signal

    metrics = {n: Signal(n, {"noisy": 1.0}) for n in ("a", "b", "c")}
    metrics["a"] = Signal("a", {"noisy": 1.0, "released": 0.1})
    signals = {**metrics, "change": Signal("change", {"released": 1.0})}
    flat = rrf(signals, [*metrics, "change"])
    assert flat["noisy"] > flat["released"]  # three views of one source outvote the change
    fused = by_source(signals, [*metrics, "change"], dict.fromkeys(metrics, "metrics"))
    assert fused["released"] > fused["noisy"]  # one line each: both lines on `released`


def test_a_candidate_a_scorer_cannot_see_is_treated_as_average() -> None:
    from stackgraph.rca.fusion import rrf
    from stackgraph.rca.scorers import Signal

    edges = Signal("edges", {"measured": 1.0}, covered=frozenset({"measured", "quiet"}))
    own = Signal("own", {"measured": 0.5, "unmeasured": 0.9})
    fused = rrf({"edges": edges, "own": own}, ["edges", "own"], ["measured", "unmeasured", "quiet"])
    mean = (1 / 61) / 2  # the edge view's contributions over the two it reaches
    assert fused["unmeasured"] == 1 / 61 + mean  # not judged by edges: average, not zero
    assert fused["measured"] == 1 / 61 + 1 / 62
    assert fused["quiet"] == 0.0 if "quiet" in fused else True  # judged, found nothing


def test_a_source_that_cannot_see_a_candidate_gives_it_its_mean_not_a_place() -> None:
    """`dark` has no series and no log line. Averaged inside each source and then ranked
    there, its small means would become second places, worth almost a first: it would
    stand level with `db`, first in logs and second in metrics, and above `api`, first in
    metrics. It gets each source's mean contribution instead, below every vote."""
    from stackgraph.rca.fusion import by_source
    from stackgraph.rca.scorers import Signal

    seen = frozenset({"db", "api", *(f"quiet{i}" for i in range(7))})
    signals = {
        "anomaly": Signal("anomaly", {"api": 0.9, "db": 0.5}, covered=seen),
        "logs": Signal("logs", {"db": 3.0}, covered=seen),
    }
    names = [*sorted(seen), "dark"]
    fused = by_source(signals, ["anomaly", "logs"], {"anomaly": "metrics"}, names)
    assert sorted(fused, key=lambda n: -fused[n])[:3] == ["db", "api", "dark"]
    assert fused["dark"] == pytest.approx(1 / len(seen))  # each source's unit, spread evenly
    first, second = (1 / 61) / (1 / 61 + 1 / 62), (1 / 62) / (1 / 61 + 1 / 62)
    assert fused["api"] == pytest.approx(first / 2) and fused["db"] == pytest.approx(
        (second + 1) / 2
    )


def test_a_source_that_names_one_candidate_gives_it_its_whole_vote() -> None:
    """A fault shows in one modality: `db`'s log lines burst, nothing else logged anything
    unusual, while the metrics and the spans are uneasy about a dozen services, `api` first
    among them. Summed, rank fusion counts how many sources name a candidate at all (`api`:
    two, at 1/61 and 1/63, against `db`'s one 1/61); pooled, each source has one unit of
    belief, and the logs give all of theirs to `db`."""
    from stackgraph.rca.fusion import by_source, rrf
    from stackgraph.rca.scorers import Signal

    uneasy = {"api": 1.0, **{f"s{i}": 0.9 - i / 100 for i in range(11)}}
    spans = {**{f"s{i}": 0.9 - i / 100 for i in range(2)}, "api": 0.5, "s9": 0.4}
    signals = {
        "anomaly": Signal("anomaly", uneasy),
        "instability": Signal("instability", spans),
        "logs": Signal("logs", {"db": 5.0}),
    }
    sources = {"anomaly": "metrics", "instability": "traces", "logs": "logs"}
    names = [*uneasy, "db"]
    per_source = {src: Signal(src, rrf(signals, [v], names)) for v, src in sources.items()}
    summed = rrf(per_source, list(per_source), names)
    assert summed["api"] > summed["db"]
    fused = by_source(signals, list(sources), sources, names)
    assert max(fused, key=lambda n: fused[n]) == "db"
    assert fused["db"] == pytest.approx(1 / 3) and sum(fused.values()) == pytest.approx(1.0)
