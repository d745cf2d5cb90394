"""Programs: the format, every verifier rule, the engine's cache and `auto`, and programs
run by the read path on a real embedded FalkorDB."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from test_investigate import T0, Series, build, shop

from stackgraph.config import Settings
from stackgraph.errors import InputError
from stackgraph.eval.records import DeployEvent
from stackgraph.rca import Alert, Investigation, Planner, investigate
from stackgraph.rca.programs import (
    BUILTIN,
    DEFAULT_PROGRAM,
    MAX_NODES,
    ProgramError,
    parse,
    playbook,
    playbook_names,
    problems,
    verify,
)
from stackgraph.store import GraphStore

SMALL: dict[str, Any] = {
    "program": "small",
    "bindings": [
        {"name": "window", "op": "windows"},
        {"name": "near", "op": "khop", "params": {"hops": "auto"}},
        {"name": "metrics", "op": "probes", "args": ["near", "window"]},
        {"name": "facts", "op": "merge", "args": ["near", "window", "metrics"]},
        {"name": "anomaly", "op": "anomaly", "args": ["facts"]},
        {"name": "answer", "op": "fuse", "args": ["facts", "anomaly"]},
    ],
}


def broken(edit: Any) -> list[str]:
    data = copy.deepcopy(SMALL)
    edit(data["bindings"])
    return problems(parse(data), BUILTIN)


def test_every_shipped_playbook_verifies_and_round_trips() -> None:
    assert {"default", "latency", "errors", "saturation", "after-deploy"} <= set(playbook_names())
    for name in playbook_names():
        program = verify(playbook(name), BUILTIN)
        again = parse(program.to_yaml(), origin="playbook")
        assert again == program and again.digest == program.digest
    assert problems(parse(SMALL), BUILTIN) == []


@pytest.mark.parametrize(
    ("edit", "rule", "binding"),
    [
        (lambda b: b[4].update(op="anomally"), "operator", "anomaly"),
        (lambda b: b[4].update(args=["window"]), "types", "anomaly"),
        (lambda b: b[1].update(name="window"), "bound-twice", "window"),
        (lambda b: b[2].update(args=["nearby", "window"]), "unbound", "metrics"),
        (lambda b: b.insert(0, b.pop(3)), "unbound", "facts"),
        (
            lambda b: b.insert(5, {"name": "extra", "op": "onset", "args": ["facts"]}),
            "unused",
            "extra",
        ),
        (lambda b: b.insert(1, {"name": "alone", "op": "anchor"}), "unused", "alone"),
        (
            lambda b: b.append({"name": "again", "op": "fuse", "args": ["facts", "anomaly"]}),
            "one-answer",
            None,
        ),
        (lambda b: b.pop(), "one-answer", None),
        (lambda b: b[1].update(params={"hops": "many"}), "params", "near"),
        (lambda b: b[1].update(params={"depth": 2}), "params", "near"),
        (lambda b: b[0].update(params={"lead_s": "auto"}), "params", "window"),
    ],
)
def test_the_verifier_names_the_binding_and_the_rule(
    edit: Any, rule: str, binding: str | None
) -> None:
    found = broken(edit)
    where = f"binding {binding!r}: {rule}:" if binding else f"program: {rule}:"
    assert any(p.startswith(where) for p in found), found


def test_a_candidate_set_never_scored_is_refused() -> None:
    data = copy.deepcopy(SMALL)
    # the candidate set only reaches the answer through a merge no scorer reads
    data["bindings"][4:] = [
        {"name": "topology", "op": "topology", "args": ["facts"]},
        {"name": "answer", "op": "fuse", "args": ["facts", "topology"]},
    ]
    assert problems(parse(data), BUILTIN) == []  # a prior is a scorer
    data["bindings"][2:] = [
        {"name": "callers", "op": "callers", "args": ["near"]},
        {"name": "facts", "op": "merge", "args": ["near", "window"]},
        {"name": "topology", "op": "topology", "args": ["facts"]},
        {"name": "answer", "op": "fuse", "args": ["facts", "topology"]},
    ]
    found = problems(parse(data), BUILTIN)
    assert any(p.startswith("binding 'callers': unused") for p in found), found


def test_size_and_malformed_programs_are_refused_with_where() -> None:
    data = copy.deepcopy(SMALL)
    extra = [{"name": f"o{i}", "op": "onset", "args": ["facts"]} for i in range(MAX_NODES)]
    data["bindings"][5:5] = extra
    data["bindings"][-1]["args"] += [f"o{i}" for i in range(MAX_NODES)]
    assert any(p.startswith("program: size:") for p in problems(parse(data), BUILTIN))
    for text, said in [
        ("bindings: [1]", "program: expected a non-empty string"),
        ("program: x\nbindings: []", "bindings: expected a non-empty list"),
        ("program: x\nbindings: [{name: a, op: windows, when: now}]", "unknown field(s)"),
        ("program: x\nbindings: [{name: a, op: khop, args: khop}]", "args must be a list"),
        ("{", "not YAML or JSON"),
    ]:
        with pytest.raises(ProgramError) as err:
            parse(text)
        assert said in str(err.value), (text, str(err.value))


def test_the_plan_carries_its_program_and_what_auto_chose(store: GraphStore) -> None:
    build(store, shop(), deploys=[DeployEvent("payment", "v2", T0 - 300)])
    plan = investigate(store, Alert({"service": "frontend"}, starts_at=T0), at=T0 + 600, hops=3)
    view = plan.program
    assert view["program"] == "default" and view["digest"] == DEFAULT_PROGRAM.digest
    assert view["chosen"]["near"] == {"hops": 3}
    assert view["chosen"]["window"] == {"baseline_end": 0.0}
    assert view["fusion"]["priors"] == ["topology", "history", "blame", "centrality"]
    assert view["fusion"]["sources"]["anomaly"] == "metrics"
    assert {r["binding"] for r in view["reads"]} == {b.name for b in DEFAULT_PROGRAM.bindings}
    assert sum(r["graph_rows"] for r in view["reads"]) > 0


def test_a_second_program_reuses_what_the_first_read(store: GraphStore) -> None:
    build(store, shop())
    alert = Alert({"service": "frontend"}, starts_at=T0)
    metrics = Series({"payment": 5.0})
    inv = Investigation(store, alert, T0 + 600, metrics)
    first = inv.run(DEFAULT_PROGRAM)
    small = copy.deepcopy(SMALL)  # the default's upstream: near + callers + unlinked
    small["bindings"][2:2] = [
        {"name": "linked", "op": "callers", "args": ["near"]},
        {"name": "candidates", "op": "unlinked", "args": ["linked"]},
    ]
    small["bindings"][4]["args"] = ["candidates", "window"]
    small["bindings"][5]["args"] = ["candidates", "window", "metrics"]
    second = inv.run(verify(parse(small), BUILTIN))
    assert not isinstance(first, str) and not isinstance(second, str)
    fresh = {c.binding for c in second.costs if not c.cached}
    assert {"window", "near", "metrics"}.isdisjoint(fresh), fresh  # shared upstream reused
    assert "facts" in fresh  # merged from fewer telemetries: a new value
    assert second.answer.candidates[0].service == "payment"
    assert not any(c.cached for c in first.costs)
    assert sum(c.metric_points for c in first.costs) > 0
    assert sum(c.metric_points for c in second.costs) == 0


def test_a_program_that_does_not_verify_fails_open(store: GraphStore) -> None:
    build(store, shop())
    data = copy.deepcopy(SMALL)
    data["bindings"][4]["op"] = "nope"
    plan = investigate(store, Alert({"service": "frontend"}, starts_at=T0), at=T0 + 600,
                       program=parse(data))  # fmt: skip
    assert plan.candidates == [] and "unknown operator 'nope'" in plan.reason


def test_a_playbook_for_saturation_blames_the_saturated_resource(store: GraphStore) -> None:
    build(store, shop())
    alert = Alert({"service": "frontend"}, starts_at=T0)
    plan = investigate(store, alert, at=T0 + 600, metrics=Series({"payment": 5.0}),
                       program=playbook("saturation"))  # fmt: skip
    assert plan.candidates[0].service == "payment"
    assert plan.playbook == "saturation" and "resources" in plan.candidates[0].signals


def test_every_playbook_reads_what_the_default_read_once(store: GraphStore) -> None:
    build(store, shop(), deploys=[DeployEvent("payment", "v2", T0 - 300)])
    inv = Investigation(store, Alert({"service": "frontend"}, starts_at=T0), T0 + 600,
                        Series({"payment": 5.0}))  # fmt: skip
    first = inv.run(DEFAULT_PROGRAM)
    assert not isinstance(first, str)
    for name in playbook_names():
        run = inv.run(playbook(name))
        assert not isinstance(run, str)
        read = [c.binding for c in run.costs if c.graph_rows or c.metric_points]
        assert read == [], (name, read)


def test_the_configured_program_is_what_every_entry_point_plans_with(
    store: GraphStore, settings: Settings, tmp_path: Path
) -> None:
    build(store, shop())
    slow = Alert({"service": "frontend", "alertname": "HighLatency"}, starts_at=T0)
    auto = Planner.from_settings(settings.model_copy(update={"investigate_program": "auto"}))
    plan = auto(store, slow, at=T0 + 600)
    assert plan.playbook == "latency" and "latenc" in plan.program["why"].lower()
    assert Planner.from_settings(settings)(store, slow, at=T0 + 600).playbook == "default"
    mine = tmp_path / "mine.yaml"
    mine.write_text(playbook("errors").to_yaml().replace("program: errors", "program: mine"))
    own = Planner.from_settings(settings.model_copy(update={"investigate_program": str(mine)}))
    assert own(store, slow, at=T0 + 600).playbook == "mine"
    with pytest.raises(InputError, match="investigate_program 'nope': neither a playbook"):
        Planner.from_settings(settings.model_copy(update={"investigate_program": "nope"}))


def test_a_muted_series_is_judged_by_no_scorer(store: GraphStore) -> None:
    """catalog's cpu moved most, payment's less: catalog leads. With catalog's cpu muted
    (`merge`'s `mute`, as knowledge a gate admitted writes it), payment leads, and the plan
    says what it did not judge."""
    build(store, shop())
    alert = Alert({"service": "frontend"}, starts_at=T0)
    metrics = Series({"payment": 3.0, "catalog": 9.0})
    plan = investigate(store, alert, at=T0 + 600, metrics=metrics)
    assert plan.candidates[0].service == "catalog"
    ref = next(e.ref for e in plan.candidates[0].evidence if e.signal == "anomaly")
    data = DEFAULT_PROGRAM.to_dict()
    for b in data["bindings"]:
        if b["op"] == "merge":
            b["params"] = {"mute": [ref]}
    muted = verify(parse(data, origin="composed"), BUILTIN)
    plan = investigate(store, alert, at=T0 + 600, metrics=metrics, program=muted)
    assert plan.candidates[0].service == "payment", ref
    assert any(f"not judged, by this platform's knowledge: {ref}" in n for n in plan.notes)
    assert not any(e.ref == ref for c in plan.candidates for e in c.evidence)
