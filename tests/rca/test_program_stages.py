"""Program stages without a model: stage 1's choice, stage 2's search, escalation; the
AST gate on synthesised operators; the program stored with the incident."""

from __future__ import annotations

import pytest
from test_investigate import T0, Series, build, shop

from stackgraph.eval.records import DeployEvent
from stackgraph.ingest import GraphIngestor
from stackgraph.rca import Alert, Investigation, investigate
from stackgraph.rca.outcome import IncidentOutcome, outcome_records
from stackgraph.rca.programs import BUILTIN, Engine, Run, playbook, verify
from stackgraph.rca.programs.attempts import escalate, with_operator
from stackgraph.rca.programs.gate import GateError, Source, compile_operator
from stackgraph.rca.programs.stages import compose, select
from stackgraph.store import GraphStore

GOOD = """
import math

def score(facts, params):
    out = {}
    for name, series in facts["series"].items():
        for s in series:
            if s["kind"] == "cpu" and s["baseline"]:
                base = sum(s["baseline"]) / len(s["baseline"])
                now = max(s["alert"])
                if now > base * params["ratio"]:
                    out[name] = math.log(now / base)
    return out
"""


def top3(run: Run) -> list[str]:
    return [c.service for c in run.answer.candidates[:3]]


def engine_for(store: GraphStore, alert: Alert, metrics: Series | None = None) -> Engine:
    engine = Investigation(store, alert, T0 + 600, metrics).engine()
    assert isinstance(engine, Engine)
    return engine


def test_stage_one_reads_the_alert_and_the_releases(store: GraphStore) -> None:
    build(store, shop())
    slow = Alert({"service": "frontend", "alertname": "HighLatency"}, starts_at=T0)
    assert select(engine_for(store, slow), slow).program.name == "latency"
    hot = Alert({"service": "frontend", "alertname": "X"}, {"summary": "CPU throttled"}, T0)
    assert select(engine_for(store, hot), hot).program.name == "saturation"
    plain = Alert({"service": "frontend", "alertname": "Down"}, starts_at=T0)
    assert select(engine_for(store, plain), plain).program.name == "default"
    with GraphIngestor(store, who="test") as writer:
        from stackgraph.eval.records import deploy_records

        writer.write(deploy_records([DeployEvent("payment", "v2", T0 - 60)]))
    chosen = select(engine_for(store, slow), slow)
    assert chosen.program.name == "after-deploy" and "payment" in chosen.why


def test_stage_two_weighs_the_evidence_differently_and_never_repeats_a_lead(
    store: GraphStore,
) -> None:
    build(store, shop(), deploys=[DeployEvent("payment", "v2", T0 - 300)])
    alert = Alert({"service": "frontend"}, starts_at=T0)
    engine = engine_for(store, alert, Series({"cart": 4.0, "payment": 2.0}))
    first = engine.run(playbook("default"))
    top = [c.service for c in first.answer.candidates[:3]]
    step = compose(engine, top)
    assert step is not None and step.stage == 2 and step.program.origin == "composed"
    verify(step.program, BUILTIN)
    again = [c.service for c in engine.run(step.program).answer.candidates]
    assert not set(top) & set(again[: len(again) - len(top)]), (top, again)
    assert compose(engine, top, tried=[step.program]) != step


def test_escalation_stops_at_the_first_sufficient_attempt(store: GraphStore) -> None:
    build(store, shop())
    alert = Alert({"service": "frontend", "alertname": "HighLatency"}, starts_at=T0)
    engine = engine_for(store, alert, Series({"payment": 5.0}))
    first = select(engine, alert)
    found = escalate(engine, alert, first, lambda step, run: "payment" not in top3(run))
    assert [a.stage for a in found] == [1] and found[0].sufficient
    assert found[0].program == "latency"
    never = escalate(engine, alert, first, lambda step, run: True)
    assert [a.stage for a in never] == [1, 2, 2]
    every = {"frontend", "checkout", "payment", "catalog", "cart"}
    refuted: set[str] = set()
    for a in never:  # leads not refuted yet come first; the refuted only fill up the three
        fresh = every - refuted
        assert set(a.top[: len(fresh)]) <= fresh or set(a.top) >= fresh, (a.top, refuted)
        refuted |= set(a.top)
    assert all(a.cost["graph_rows"] == 0 for a in never[1:])  # all from the cache


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("import os\ndef score(facts, params):\n    return {}", "import: ['os']"),
        ("def score(facts, params):\n    return open('/etc/passwd')", "name: 'open'"),
        ("def score(facts, params):\n    return eval('1')", "name: 'eval'"),
        ("def score(facts, params):\n    return facts.__class__", "attribute: '__class__'"),
        ("def score(facts, params):\n    while True:\n        pass", "statement: While"),
        ("def score(facts, params):\n    return {'a': 0.7}", "threshold: the number 0.7"),
        ("def score(facts):\n    return {}", "signature"),
        ("def score(facts, params):\n    return score(facts, params)", "recursion"),
        ("def score(facts, params)\n    return {}", "syntax"),
        ("x = 1\ndef score(facts, params):\n    return {}", "signature"),
    ],
)
def test_the_gate_refuses_with_the_rule(code: str, said: str) -> None:
    with pytest.raises(GateError) as err:
        compile_operator(Source("mine", code, {}))
    assert any(said in r for r in err.value.reasons), err.value.reasons


def test_an_admitted_operator_votes_in_a_program(store: GraphStore) -> None:
    op = compile_operator(Source("cpu_ratio", GOOD, {"ratio": 1.5}, "cpu above ratio x base"))
    assert op.custom and op.kind == "scorer" and op.params["ratio"].default == 1.5
    build(store, shop())
    alert = Alert({"service": "frontend"}, starts_at=T0)
    inv = Investigation(store, alert, T0 + 600, Series({"payment": 5.0}),
                        library={**BUILTIN, op.name: op})  # fmt: skip
    plan = inv.plan(verify(with_operator(playbook("default"), op.name), inv.library))
    assert plan.candidates[0].service == "payment"
    assert plan.candidates[0].signals["cpu_ratio"] > 0
    broken = compile_operator(Source("broken", "def score(facts, params):\n    return 1 // 0", {}))
    library = {**BUILTIN, "broken": broken}
    inv = Investigation(store, alert, T0 + 600, Series({"payment": 5.0}), library=library)
    plan = inv.plan(verify(with_operator(playbook("default"), "broken"), library))
    assert plan.candidates and any("broken abstained: failed" in n for n in plan.notes)


def test_the_incident_stores_the_program_of_its_plan(store: GraphStore) -> None:
    build(store, shop())
    alert = Alert({"service": "frontend"}, starts_at=T0, fingerprint="fp-prog")
    plan = investigate(store, alert, at=T0 + 600)
    batch = outcome_records(IncidentOutcome("fp-prog", alert, "frontend", T0, plan=plan))
    with GraphIngestor(store, who="test") as writer:
        report = writer.write(batch)
    assert not report.rejected, report.rejected
    rows = store.read(
        "MATCH (:Incident {fingerprint: 'fp-prog'})-[e:PLANNED_WITH]->(p:Program) "
        "RETURN p.name AS name, p.digest AS digest, e.chosen_json AS chosen"
    )
    chosen = '{"near": {"hops": 2}, "window": {"baseline_end": 0.0}}'
    assert rows == [{"name": "default", "digest": plan.program["digest"], "chosen": chosen}]
