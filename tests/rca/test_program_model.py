"""The model's stages against the scripted Ollama wire server: a valid program, an invalid
one repaired from the verifier's refusal, a malicious operator refused by the gate with the
reason, and a good one admitted on replay."""

from __future__ import annotations

import json
from typing import Any

from sgtest import ScriptedModel
from test_investigate import T0, Series, build, shop
from test_program_stages import GOOD

from stackgraph.rca import Alert, Investigation
from stackgraph.rca.programs import BUILTIN, Engine, playbook
from stackgraph.rca.programs.attempts import escalate
from stackgraph.rca.programs.model_stages import ModelClient, compose_with_model
from stackgraph.rca.programs.stages import Attempt
from stackgraph.rca.programs.synthesis import MAX_CUSTOM, CustomLibrary, synthesise
from stackgraph.store import GraphStore

ALERT = Alert({"service": "frontend", "alertname": "HighLatency"}, starts_at=T0)


def answer(doc: dict[str, Any]) -> dict[str, Any]:
    return {"content": json.dumps(doc)}


def engine_for(store: GraphStore) -> Engine:
    build(store, shop())
    engine = Investigation(store, ALERT, T0 + 600, Series({"payment": 5.0})).engine()
    assert isinstance(engine, Engine)
    return engine


def metrics_only() -> dict[str, Any]:
    bindings = [b.to_dict() for b in playbook("saturation").bindings]
    return {"program": "model-metrics", "bindings": bindings}


def test_the_model_composes_a_program_and_repairs_a_refused_one(
    scripted_model: ScriptedModel, store: GraphStore
) -> None:
    engine = engine_for(store)
    wrong = [{"name": "w", "op": "windows"}, {"name": "a", "op": "anomaly", "args": ["w"]}]
    bad = {"program": "bad", "bindings": wrong}
    scripted_model.script = [answer(bad), answer(metrics_only())]
    client = ModelClient(scripted_model.url, "m")
    step, said = compose_with_model(client, engine.library, ALERT, ["cart"])
    assert step is not None and step.program.name == "model-metrics"
    assert step.program.answer.params["exclude"] == ["cart"]
    assert "1 repair" in step.why and said and "types: argument 1 is Window" in said[0]
    second = scripted_model.requests[1]
    assert second["format"] == "json"
    assert "Refused: the verifier: binding" in second["messages"][-1]["content"]
    run = engine.run(step.program)
    assert run.answer.candidates[0].service == "payment"


def test_the_model_gives_up_after_two_repairs_and_the_search_takes_over(
    scripted_model: ScriptedModel, store: GraphStore
) -> None:
    engine = engine_for(store)
    scripted_model.script = [{"content": "not a program"}]
    client = ModelClient(scripted_model.url, "m")
    step, said = compose_with_model(client, engine.library, ALERT, ["cart"])
    assert step is None and len(scripted_model.requests) == 3 and "after 2 repairs" in said[-1]
    first = Attempt(1, playbook("default"), "configured")
    found = escalate(engine, ALERT, first, lambda step, run: True, attempts=2, model=client)
    assert ([a.stage for a in found] == [1, 2] and found[1].program.endswith("-only")) or found[
        1
    ].program.startswith("without-")


def test_a_malicious_operator_is_refused_and_a_good_one_admitted(
    scripted_model: ScriptedModel, store: GraphStore
) -> None:
    engine = engine_for(store)
    evil = {"name": "evil", "params": {}, "code":
            "import os\ndef score(facts, params):\n    return {os.getcwd(): 1}"}  # fmt: skip
    good = {"name": "cpu_ratio", "doc": "cpu above a ratio of its base", "params": {"ratio": 1.5},
            "code": GOOD}  # fmt: skip
    scripted_model.script = [answer(evil), answer(good)]
    client = ModelClient(scripted_model.url, "m")
    checked: list[str] = []

    def resolves(op: Any) -> tuple[bool, dict[str, Any]]:
        checked.append(op.name)
        return True, {"case": "c1"}

    made = synthesise(client, engine.library, ALERT, ["cart"], resolves,
                      lambda op: (True, {"ac1_before": 3, "ac1_after": 3}))  # fmt: skip
    assert made.said and "import: ['os']" in made.said[0]
    assert (
        "Refused: the gate: line 1: import" in scripted_model.requests[1]["messages"][-1]["content"]
    )
    assert made.admission.admitted and checked == ["cpu_ratio"] and made.op is not None
    library = CustomLibrary()
    assert made.source is not None
    library.admit(made.op, made.source, made.admission)
    rec = library.records(now=T0).nodes[0]
    assert rec.label == "Operator" and rec.source == "LlmInferred"
    assert json.loads(rec.props["admission_json"])["datasets"]["ac1_after"] == 3


def test_stage_three_in_escalation_and_the_library_keeps_nineteen(
    scripted_model: ScriptedModel, store: GraphStore
) -> None:
    engine = engine_for(store)
    scripted_model.script = [answer(metrics_only()),
                             answer({"name": "cpu_ratio", "params": {"ratio": 1.5},
                                     "code": GOOD})]  # fmt: skip
    custom = CustomLibrary()
    client = ModelClient(scripted_model.url, "m")
    yes = (lambda op: (True, {}), lambda op: (True, {}))
    first = Attempt(1, playbook("default"), "configured")
    found = escalate(engine, ALERT, first, lambda step, run: True, 3, client, custom, yes)
    assert [a.stage for a in found] == [1, 2, 3]
    assert "cpu_ratio" in found[2].why and "cpu_ratio" in custom.operators
    assert "cpu_ratio" in engine.library and "cpu_ratio" not in BUILTIN
    src = custom.sources["cpu_ratio"]
    for i in range(MAX_CUSTOM + 2):
        op = custom.operators["cpu_ratio"]
        custom.admit(
            op.__class__(**{**vars(op), "name": f"op{i}"}), src, custom.admissions["cpu_ratio"]
        )
        custom.used(["cpu_ratio"])
    assert len(custom.operators) == MAX_CUSTOM and "cpu_ratio" in custom.operators
    assert custom.evicted[:2] == ["op0", "op1"]
