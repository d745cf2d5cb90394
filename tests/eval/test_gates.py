"""The dual gate: a proposal that helps is admitted; one that helps its own incidents but
regresses the testbed is rejected by the outer gate; a no-op is rejected by the strict
clause; and a rejected proposal leaves the live knowledge byte-identical. The replay here
is a table of what each knowledge version gets right (the real replay, on a graph, is in
tests/api/test_knowledge.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace

from sgtest import ScriptedModel

from stackgraph.eval.gates import COST_BAND, Score, judge, stratified_testbed
from stackgraph.memory.knowledge import Item, Knowledge, Proposal, Trajectory, mine, shipped
from stackgraph.rca.programs import BUILTIN, parse, verify

SOURCES = ("a1", "a2", "a3", "a4", "a5", "a6")
BED = ("b1", "b2", "b3")


def program(name: str, sig: str = "HighLatency:web") -> Proposal:
    item = Item(f"K3:program:{sig}", "program", f"plan {sig} with {name}", sig,
                data={"program": name})  # fmt: skip
    return Proposal("add", item, SOURCES, "mined")


def table(right: Mapping[str, set[str]], cost: float = 3.0):  # type: ignore[no-untyped-def]
    """Replay: incident -> correct when the knowledge's program for it is in `right`."""

    def replay(k: Knowledge, ids: Sequence[str]) -> dict[str, Score]:
        item = k.program_for("HighLatency:web")
        chosen = str(item.data["program"]) if item else "default"
        return {i: Score(chosen in right.get(i, set()), cost) for i in ids}

    return replay


def test_a_proposal_that_helps_is_admitted_with_its_gate_results() -> None:
    live = shipped()
    fixed = {a: {"errors"} for a in SOURCES[:5]}  # five fixed: beyond chance (p = 1/32)
    replay = table({**fixed, "a6": {"errors", "default"},
                    **{b: {"errors", "default"} for b in BED}})  # fmt: skip
    verdict = judge(program("errors"), live, replay, BED)
    assert verdict.inner.passed and verdict.outer is not None and verdict.outer.passed
    assert verdict.promoted is not None and verdict.promoted.version == live.version + 1
    assert verdict.promoted.program_for("HighLatency:web") is not None
    assert verdict.promoted.gates["inner"]["after"]["accuracy"] == 1.0
    assert verdict.promoted.gates["inner"]["before"]["accuracy"] == round(1 / 6, 4)


def test_a_gain_within_chance_is_not_learned() -> None:
    one = table({"a1": {"errors"}, **{a: {"errors", "default"} for a in (*SOURCES[1:], *BED)}})
    verdict = judge(program("errors"), shipped(), one, BED)
    assert verdict.inner.passed and verdict.outer is not None and not verdict.outer.passed
    assert "1 incident(s) fixed against 0 broken is within chance" in verdict.outer.why


def test_helping_its_own_incidents_but_not_the_testbed_is_rejected_by_the_outer_gate() -> None:
    live = shipped()
    before = json.dumps(live.to_dict(), sort_keys=True)
    right = {"a1": {"saturation"}, "a2": {"saturation"}, "b1": {"default"},
             "b2": {"default", "saturation"}, "b3": {"default"}}  # fmt: skip
    replay = table(right)
    verdict = judge(program("saturation"), live, replay, BED)
    assert verdict.inner.passed
    assert verdict.outer is not None and not verdict.outer.passed
    assert "accuracy fell on ['testbed']" in verdict.outer.why
    assert verdict.promoted is None
    assert json.dumps(live.to_dict(), sort_keys=True) == before  # byte-identical


def test_a_no_op_is_rejected_by_the_strict_clause() -> None:
    live = shipped()
    same = table({i: {"default", "latency"} for i in (*SOURCES, *BED)})
    verdict = judge(program("latency"), live, same, BED)
    assert not verdict.inner.passed and verdict.outer is None and verdict.promoted is None
    assert "no better" in verdict.inner.why
    # equal accuracy: clearly cheaper (beyond the band) is better, a little cheaper is not
    for cost, passes in ((3.0 * (1 - 2 * COST_BAND), True), (3.0 * (1 - COST_BAND / 2), False)):

        def priced(k: Knowledge, ids: Sequence[str], cost: float = cost) -> dict[str, Score]:
            return {i: Score(True, cost if k.program_for("HighLatency:web") else 3.0) for i in ids}

        assert judge(program("latency"), live, priced, BED).inner.passed is passes


def test_skipping_a_line_of_evidence_must_fix_incidents_not_only_cost_less() -> None:
    """Cheaper and as accurate on every incident replayed: enough to skip re-reading the
    graph, not to skip a check that reads metrics (an independent line of evidence)."""
    live = shipped()

    def skip(tool: str) -> Proposal:
        item = Item(f"K3:rule:HighLatency:web:-{tool}", "rule", f"skip {tool}", "HighLatency:web",
                    "-", {"tool": tool})  # fmt: skip
        return Proposal("add", item, SOURCES, "mined")

    def cheaper_without(k: Knowledge, ids: Sequence[str]) -> dict[str, Score]:
        _, avoid, _ = k.tool_plan("HighLatency:web")
        return {i: Score(True, 2.0 if avoid else 3.0) for i in ids}

    graph = judge(skip("query_stack_graph"), live, cheaper_without, BED)
    assert graph.promoted is not None, graph.outer
    metrics = judge(skip("prometheus_query"), live, cheaper_without, BED)
    assert metrics.inner.passed and metrics.outer is not None and metrics.promoted is None
    assert "skipping prometheus_query drops a line of evidence" in metrics.outer.why


def trajectory(fp: str, label: str, cause: str, leads: tuple[str, ...], at: float,
               alertname: str = "HighLatency") -> Trajectory:  # fmt: skip
    from stackgraph.memory.knowledge import Step

    steps = (Step("query_stack_graph", "edges", cause, "supports", "Tempo"),)
    concluded = cause if label == "correct" else None
    return Trajectory(fp, f"{alertname}:web", {"alertname": alertname, "service": "web"}, at,
                      leads=leads, steps=steps, label=label, root_cause=cause,
                      program="default", conclusion=concluded)  # fmt: skip


def test_miners_and_the_stratified_testbed() -> None:
    runs = [
        trajectory("t1", "correct", "db", ("db", "api"), 1.0),
        trajectory("t2", "partial", "db", ("api", "db"), 2.0),
        trajectory("t3", "correct", "db", ("db",), 3.0),
        trajectory("t4", "pending", "db", ("db",), 4.0),
        trajectory("t5", "wrong", "db", ("api",), 4.5),
        trajectory("e1", "correct", "api", ("api",), 5.0, "HighErrorRate"),
    ]
    proposals = mine(runs, shipped(), ["default", "errors", "latency"])
    found = {p.item.id: p for p in proposals}
    programs = [p for p in proposals if p.item.kind == "program"]  # alternatives for one slot
    assert {p.item.data["program"] for p in programs} == {"errors", "latency"}
    assert programs[0].sources == ("t2", "t5")  # the plans that missed; the hits held out
    skeleton = found["K2:skeleton:HighLatency:web"]
    assert skeleton.item.data["tools"] == ["query_stack_graph"] and skeleton.op == "add"
    assert not any("HighErrorRate" in i for i in found)  # one run is an anecdote
    bed = stratified_testbed(runs, exclude=("t1",), size=3)
    assert "t1" not in bed and "t4" not in bed and "e1" in bed and len(bed) == 3


def test_the_models_proposals_are_checked_and_repaired(scripted_model: ScriptedModel) -> None:
    from stackgraph.eval.evolution import model_proposals
    from stackgraph.rca.programs.model_stages import ModelClient

    runs = [trajectory("t1", "partial", "db", ("api", "db"), 1.0),
            trajectory("t2", "wrong", "db", ("api",), 2.0)]  # fmt: skip
    wrong_sig = {"proposals": [{"op": "add", "kind": "program", "signature": "Nope:x",
                                "data": {"program": "errors"}}]}  # fmt: skip
    good = {"proposals": [{"op": "add", "kind": "program", "signature": "HighLatency:web",
                           "text": "errors first", "data": {"program": "errors"}}]}  # fmt: skip
    scripted_model.script = [{"content": json.dumps(wrong_sig)}, {"content": json.dumps(good)}]
    found, said = model_proposals(ModelClient(scripted_model.url, "m"), runs, shipped())
    assert said and "signature 'Nope:x' has no labelled trajectory" in said[0]
    assert [(p.op, p.item.id, p.item.data["program"]) for p in found] == [
        ("add", "K3:program:HighLatency:web", "errors")
    ]
    assert found[0].sources == ("t1", "t2") and found[0].item.provenance["source"] == "model"


def test_a_series_that_misled_plans_is_proposed_muted_and_one_that_led_right_is_not() -> None:
    noisy = "cache/latency/from:web"
    runs = [
        replace(trajectory("m1", "wrong", "db", ("cache", "db"), 1.0), lead_series=(noisy,)),
        replace(
            trajectory("m2", "partial", "db", ("cache", "db"), 2.0),
            lead_series=(noisy, "cache/cpu/cpu"),
        ),
        replace(trajectory("m3", "correct", "db", ("db",), 3.0), lead_series=("db/errors/x",)),
    ]
    found = [p for p in mine(runs, shipped(), ["default"]) if p.item.kind == "program"
             and p.item.polarity == "-"]  # fmt: skip
    assert [p.item.data["mute"] for p in found] == [[noisy]]
    assert found[0].sources == ("m1", "m2") and found[0].item.id == "K3:program:HighLatency:web"
    program = verify(parse({"program": found[0].item.data["program"],
                            "bindings": found[0].item.data["bindings"]}, origin="composed"),
                     BUILTIN)  # fmt: skip
    assert [b.params.get("mute") for b in program.bindings if b.op == "merge"] == [[noisy]]
    led_right = [*runs, replace(trajectory("m4", "correct", "cache", ("cache",), 4.0),
                                lead_series=(noisy,))]  # fmt: skip
    assert not [p for p in mine(led_right, shipped(), ["default"]) if p.item.polarity == "-"]
    assert Trajectory.from_dict(runs[1].to_dict()).lead_series == (noisy, "cache/cpu/cpu")


def test_the_experiments_report_groups_rejections_by_kind_and_reason() -> None:
    """`stackgraph eval evolve` reports each kind of rejection once, with its count and an
    example that names what was proposed and what its gate measured before and after it:
    the first few verdicts are often one signature's program choices judged alike, which
    says nothing of the rest."""
    from stackgraph.eval.evolve_experiment import _rejections

    names = ("errors", "saturation", "latency")
    same = table({i: {"default", *names} for i in (*SOURCES, *BED)})
    noops = [judge(program(p), shipped(), same, BED) for p in names]
    rest = {a: {"errors", "default"} for a in (*SOURCES[2:], *BED)}
    one = table({"a1": {"errors"}, "a2": {"errors", "default"}, **rest})  # within chance
    two = table({"a1": {"errors"}, "a2": {"errors"}, **rest})
    chance = [judge(program("errors"), shipped(), r, BED) for r in (one, two)]
    groups = _rejections([*noops, *chance])
    assert [(g["kind"], g["count"]) for g in groups] == [("program", 3), ("program", 2)]
    assert "no better" in groups[0]["reason"] and "plan HighLatency:web with errors" in (
        groups[0]["example"]["what"])  # fmt: skip
    assert groups[1]["reason"].startswith("N incident(s) fixed against N broken")
    # with what the rejecting gate measured: the no-op's own incidents, as they were
    example = groups[0]["example"]
    assert example["before"] == example["after"] and example["cases"] == len(SOURCES)
    assert set(example["before"]) == {"accuracy", "cost"}
    assert groups[1]["example"]["before"] == {"testbed": 1.0}
    from stackgraph.cli.eval import evolve_lines

    arm = {"ac1": 0.5, "plan_ac1": 0.5, "validated_precision": None, "validated": 0,
           "tool_calls_per_incident": 4.0, "seconds_per_incident": 0.1}  # fmt: skip
    report = {
        "dataset": "t",
        "incidents": 4,
        "every": 2,
        "proposals": 5,
        "admitted": 0,
        "rejected_inner": 3,
        "rejected_outer": 2,
        "off": arm,
        "on": arm,
        "admitted_items": [],
        "rejected": {"inner": groups[:1], "outer": groups[1:]},
    }
    lines = evolve_lines(report)
    assert "rejected by the inner gate, 3 program proposal(s): no better" in lines[3], lines
    assert lines[3].endswith(f"(accuracy {example['before']['accuracy']:g} → "
                             f"{example['after']['accuracy']:g}, cost "
                             f"{example['before']['cost']:g} → {example['after']['cost']:g} "
                             f"over {len(SOURCES)} incident(s))"), lines[3]  # fmt: skip
    assert "(testbed 1 → " in lines[4], lines
