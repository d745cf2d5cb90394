"""Scorecards: AC@1, AC@3, AC@5, Avg@5 and MRR, overall and per fault type.

AC@k = fraction of cases whose labelled root cause is in the top k; Avg@5 = mean of
AC@1..AC@5; MRR = mean of 1/rank (0 when the root cause is not ranked at all).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from .datasets.model import Case


def metrics(ranks: Sequence[Sequence[str]], truths: Sequence[str]) -> dict[str, float]:
    n = len(truths)
    if n == 0:
        return {"ac1": 0.0, "ac3": 0.0, "ac5": 0.0, "avg5": 0.0, "mrr": 0.0}
    pos = [list(r).index(t) + 1 if t in r else 0 for r, t in zip(ranks, truths, strict=True)]

    def ac(k: int) -> float:
        return sum(1 for p in pos if 0 < p <= k) / n

    return {
        "ac1": round(ac(1), 4),
        "ac3": round(ac(3), 4),
        "ac5": round(ac(5), 4),
        "avg5": round(sum(ac(k) for k in range(1, 6)) / 5, 4),
        "mrr": round(sum(1.0 / p for p in pos if p > 0) / n, 4),
    }


def scorecard(
    dataset: str,
    cases: Sequence[Case],
    ranks: Mapping[str, Sequence[Sequence[str]]],
    seconds: Mapping[str, Sequence[float]],
) -> dict[str, Any]:
    """The JSON scorecard: per method overall, per fault type, and mean seconds per case."""
    truths = [c.root_cause for c in cases]
    by_fault: dict[str, list[int]] = defaultdict(list)
    for i, c in enumerate(cases):
        by_fault[c.fault_type].append(i)
    methods: dict[str, Any] = {}
    faults: dict[str, Any] = {}
    for name, r in ranks.items():
        m = metrics(r, truths)
        took = seconds.get(name, [])
        m["seconds_per_case"] = round(sum(took) / len(took), 5) if took else 0.0
        methods[name] = m
        faults[name] = {
            f: {"cases": len(ix), **metrics([r[i] for i in ix], [truths[i] for i in ix])}
            for f, ix in sorted(by_fault.items())
        }
    return {"dataset": dataset, "cases": len(cases), "methods": methods, "by_fault": faults}


def markdown(card: Mapping[str, Any]) -> str:
    """The scorecard as markdown tables (overall, then AC@1 per fault type)."""
    lines = [
        f"### {card['dataset']} ({card['cases']} cases)",
        "",
        "| method | AC@1 | AC@3 | AC@5 | Avg@5 | MRR | s/case |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, m in card["methods"].items():
        lines.append(
            f"| {name} | {100 * m['ac1']:.1f} | {100 * m['ac3']:.1f} | {100 * m['ac5']:.1f} | "
            f"{100 * m['avg5']:.1f} | {m['mrr']:.3f} | {m['seconds_per_case']:.4f} |"
        )
    faults = sorted({f for per in card["by_fault"].values() for f in per})
    if faults:
        lines += ["", "AC@1 (%) per fault type (cases):", ""]
        first = next(iter(card["by_fault"].values()))
        head = " | ".join(f"{f} ({first[f]['cases']})" for f in faults)
        lines += [f"| method | {head} |", "|---" * (len(faults) + 1) + "|"]
        for name, per in card["by_fault"].items():
            cells = " | ".join(f"{100 * per[f]['ac1']:.1f}" for f in faults)
            lines.append(f"| {name} | {cells} |")
    return "\n".join(lines) + "\n"
