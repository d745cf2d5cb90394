"""Scorecards: AC@1, AC@3, AC@5, Avg@5 and MRR, overall and per fault type, with what each
method was given, every case's ranks, and what went wrong on the way (fail-open plans,
alerts that had to be placed by the fallback, skipped cases).

AC@k = fraction of cases whose labelled root cause is in the top k; Avg@5 = mean of
AC@1..AC@5; MRR = mean of 1/rank (0 when the root cause is not ranked at all). Each AC@1
comes with its 95% Wilson interval, and StackGraph's against every other method's is a
paired comparison on the same cases (`eval.intervals`): the cases only one of the two
ranked first, and the one-sided p that StackGraph is the better.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .alerting import FALLBACK_DELAY_S, AlertTime
from .baselines import inputs_of
from .datasets.model import Case
from .intervals import better_p, wilson

OURS = "stackgraph"
"""The method the paired comparisons are about."""


@dataclass
class CaseResult:
    """One scored case: each method's ranking and time, and the replay's own account."""

    case: Case
    ranks: dict[str, list[str]]
    seconds: dict[str, float]
    alert: AlertTime | None = None
    fail_open: str | None = None
    """The plan's reason when it ranked nothing (its ranking is then by name)."""
    notes: list[str] = field(default_factory=list)
    votes: dict[str, dict[str, float]] = field(default_factory=dict)
    """Each candidate's breakdown, per scorer (kept with `--ablation`)."""
    attempts: list[dict[str, Any]] = field(default_factory=list)
    """Stages 1-3 on this case (`rca.programs.attempts`), as dicts."""


def metrics(ranks: Sequence[Sequence[str]], truths: Sequence[str]) -> dict[str, float]:
    n = len(truths)
    if n == 0:
        return {"ac1": 0.0, "ac3": 0.0, "ac5": 0.0, "avg5": 0.0, "mrr": 0.0}
    pos = [rank_of(r, t) for r, t in zip(ranks, truths, strict=True)]

    def ac(k: int) -> float:
        return sum(1 for p in pos if 0 < p <= k) / n

    return {
        "ac1": round(ac(1), 4),
        "ac3": round(ac(3), 4),
        "ac5": round(ac(5), 4),
        "avg5": round(sum(ac(k) for k in range(1, 6)) / 5, 4),
        "mrr": round(sum(1.0 / p for p in pos if p > 0) / n, 4),
    }


def rank_of(ranking: Sequence[str], truth: str) -> int:
    """1-based rank of the root cause; 0 when it is not ranked."""
    return list(ranking).index(truth) + 1 if truth in ranking else 0


def _alerts(results: Sequence[CaseResult]) -> dict[str, Any]:
    timed = [r for r in results if r.alert is not None]
    how = Counter(r.alert.how for r in timed if r.alert is not None)
    delays = sorted(r.alert.fired_at - r.case.inject_time for r in timed if r.alert is not None)
    return {
        "detected": how.get("detected", 0),
        "recorded": how.get("recorded", 0),
        "no_signal": how.get("no signal", 0),
        "in_band": how.get("in band", 0),
        "fallback_delay_s": FALLBACK_DELAY_S,
        "median_delay_s": round(delays[len(delays) // 2], 1) if delays else None,
    }


def attempts_summary(results: Sequence[CaseResult]) -> dict[str, Any]:
    """Accuracy@3,i (the root cause in the top 3 within i attempts) for i = 1..the most
    attempts made, beside the default program's AC@3 and its AC@3i (what reading i times
    three of its own candidates gives: the bar a new program must clear), and each stage's
    use and mean cost."""
    tried = [r for r in results if r.attempts]
    if not tried:
        return {}
    most = max(len(r.attempts) for r in tried)
    n = len(results)
    acc = {f"acc@3,{i}": round(sum(any(a["sufficient"] for a in r.attempts[:i])
                                   for r in tried) / n, 4)
           for i in range(1, most + 1)}  # fmt: skip
    ranks = [rank_of(r.ranks[OURS], r.case.root_cause) for r in results]
    further = {f"default_ac@{3 * i}": round(sum(0 < p <= 3 * i for p in ranks) / n, 4)
               for i in range(1, most + 1)}  # fmt: skip
    stages: dict[str, dict[str, float]] = {}
    for stage in sorted({a["stage"] for r in tried for a in r.attempts}):
        runs = [a for r in tried for a in r.attempts if a["stage"] == stage]
        stages[str(stage)] = {
            "attempts": len(runs),
            "sufficient": sum(a["sufficient"] for a in runs),
            **{f"mean_{k}": round(sum(a["cost"].get(k, 0.0) for a in runs) / len(runs), 4)
               for k in ("seconds", "graph_rows", "metric_points")},
        }  # fmt: skip
    programs = Counter(a["program"] for r in tried for a in r.attempts[:1])
    return {**acc, "default_ac3": further["default_ac@3"], **further, "stages": stages,
            "stage1_programs": dict(programs)}  # fmt: skip


def scorecard(
    dataset: str,
    results: Sequence[CaseResult],
    *,
    skipped: Sequence[Mapping[str, str]] = (),
    cost: Mapping[str, Any] | None = None,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """The JSON scorecard over the scored cases (skipped ones are listed, not scored)."""
    truths = [r.case.root_cause for r in results]
    names = list(dict.fromkeys(m for r in results for m in r.ranks))
    by_fault: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(results):
        by_fault[r.case.fault_type].append(i)
    firsts = {name: [rank_of(r.ranks[name], r.case.root_cause) == 1 for r in results]
              for name in names}  # fmt: skip
    methods: dict[str, Any] = {}
    faults: dict[str, Any] = {}
    for name in names:
        ranking = [r.ranks[name] for r in results]
        m: dict[str, Any] = metrics(ranking, truths)
        took = [r.seconds[name] for r in results if name in r.seconds]
        m["seconds_per_case"] = round(sum(took) / len(took), 5) if took else 0.0
        m["ac1_ci"] = wilson(sum(firsts[name]), len(truths))
        methods[name] = m
        faults[name] = {
            f: {"cases": len(ix), **metrics([ranking[i] for i in ix], [truths[i] for i in ix])}
            for f, ix in sorted(by_fault.items())
        }
    return {
        "dataset": dataset,
        "n_cases": len(results),
        "methods": methods,
        "by_fault": faults,
        "paired": paired(firsts),
        "inputs": {name: list(inputs_of(name)) for name in names},
        "alerts": _alerts(results),
        "fail_open": [
            {"case_id": r.case.case_id, "reason": r.fail_open} for r in results if r.fail_open
        ],
        "cost": dict(cost or {}),
        "attempts": attempts_summary(results),
        "notes": list(notes),
        "skipped": list(skipped),
        "cases": [
            {
                "case_id": r.case.case_id,
                "fault_type": r.case.fault_type,
                "root_cause": r.case.root_cause,
                "alert": None
                if r.alert is None
                else {
                    "how": r.alert.how,
                    "signal": r.alert.signal,
                    "delay_s": round(r.alert.fired_at - r.case.inject_time, 1),
                },
                "ranks": {name: rank_of(r.ranks[name], r.case.root_cause) for name in names},
                "notes": r.notes,
                **({"votes": r.votes} if r.votes else {}),
                **({"attempts": r.attempts} if r.attempts else {}),
            }
            for r in results
        ],
    }


def paired(firsts: Mapping[str, Sequence[bool]]) -> dict[str, Any]:
    """StackGraph's AC@1 against each other method's on the same cases (`firsts`: per method,
    per case, whether it ranked the root cause first): the cases only it did (`wins`), only
    the other did (`losses`), and the one-sided p that it is the better (McNemar's exact
    test)."""
    ours = firsts.get(OURS)
    if ours is None:
        return {}
    out: dict[str, Any] = {}
    for name, theirs in firsts.items():
        if name == OURS:
            continue
        wins = sum(1 for a, b in zip(ours, theirs, strict=True) if a and not b)
        losses = sum(1 for a, b in zip(ours, theirs, strict=True) if b and not a)
        out[name] = {"wins": wins, "losses": losses, "p": round(better_p(wins, losses), 4)}
    return out


def _interval(ci: Sequence[float] | None) -> str:
    return "–" if not ci else f"{100 * ci[0]:.1f}–{100 * ci[1]:.1f}"


def markdown(card: Mapping[str, Any]) -> str:
    """The scorecard as markdown: overall, AC@1 per fault type, then what to know."""
    lines = [
        f"### {card['dataset']} ({card['n_cases']} cases)",
        "",
        "| method | AC@1 | AC@1 95% CI | AC@3 | AC@5 | Avg@5 | MRR | s/case | inputs |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, m in card["methods"].items():
        lines.append(
            f"| {name} | {100 * m['ac1']:.1f} | {_interval(m.get('ac1_ci'))} | "
            f"{100 * m['ac3']:.1f} | {100 * m['ac5']:.1f} | "
            f"{100 * m['avg5']:.1f} | {m['mrr']:.3f} | {m['seconds_per_case']:.4f} | "
            f"{', '.join(card['inputs'].get(name, []))} |"
        )
    pairs = card.get("paired") or {}
    if pairs:
        lines += ["", f"AC@1, {OURS} against each method on the same cases (McNemar's exact "
                  "test): the cases only one of the two ranked first, and the one-sided p "
                  f"that {OURS} is the better:", ""]  # fmt: skip
        lines += [f"- {name}: {v['wins']} only {OURS}, {v['losses']} only {name}, "
                  f"p = {v['p']:.3f}" for name, v in pairs.items()]  # fmt: skip
    faults = sorted({f for per in card["by_fault"].values() for f in per})
    if faults:
        lines += ["", "AC@1 (%) per fault type (cases):", ""]
        first = next(iter(card["by_fault"].values()))
        head = " | ".join(f"{f} ({first[f]['cases']})" for f in faults)
        lines += [f"| method | {head} |", "|---" * (len(faults) + 1) + "|"]
        for name, per in card["by_fault"].items():
            cells = " | ".join(f"{100 * per[f]['ac1']:.1f}" for f in faults)
            lines.append(f"| {name} | {cells} |")
    a = card["alerts"]
    lines += [
        "",
        f"Alerts (median {a['median_delay_s']} s after the fault start): {a['detected']} "
        f"detected on the symptom's own series, {a['recorded']} the dataset's recorded alert "
        f"where they showed nothing; a fixed {a['fallback_delay_s']:.0f} s delay for "
        f"{a['no_signal']} without a symptom series and {a['in_band']} whose series stayed "
        "in band.",
        f"Fail-open plans: {len(card['fail_open'])}"
        + "".join(f"\n- {f['case_id']}: {f['reason']}" for f in card["fail_open"]),
    ]
    if card["cost"]:
        lines.append("Cost: " + ", ".join(f"{k} {v}" for k, v in card["cost"].items()))
    at = card.get("attempts") or {}
    if at:
        acc = ", ".join(f"Accuracy@3,{k.split(',')[1]} {100 * v:.1f}" for k, v in at.items()
                        if k.startswith("acc@3,"))  # fmt: skip
        down = ", ".join(f"AC@{k.split('@')[1]} {100 * v:.1f}" for k, v in at.items()
                         if k.startswith("default_ac@"))  # fmt: skip
        lines.append(f"Program stages: {acc} (the default program's {down}); stage 1 chose "
                     f"{at['stage1_programs']}")  # fmt: skip
        for stage, st in at["stages"].items():
            lines.append(f"- stage {stage}: {st['attempts']} attempt(s), {st['sufficient']} "
                         f"found the root cause; mean {st['mean_seconds']} s, "
                         f"{st['mean_graph_rows']} graph rows, {st['mean_metric_points']} "
                         "metric points")  # fmt: skip
    if card["skipped"]:
        lines.append(f"Skipped cases: {len(card['skipped'])}")
        lines += [f"- {s['case_id']}: {s['reason']}" for s in card["skipped"]]
    return "\n".join(lines) + "\n"
