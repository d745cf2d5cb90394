"""The end-to-end scorecard for people: a rich table (the CLI) or markdown (EVAL.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

__all__ = ["COLUMNS", "markdown", "rows", "table"]

COLUMNS = (
    "arm",
    "cases",
    "plan AC@1",
    "plan AC@3",
    "replay plan AC@1/3",
    "conclusion acc.",
    "coverage",
    "Validated precision (n)",
    "calibration ECE (evidence alone)",
    "ECE if calibrated: mean / 95th (p)",
    "s / incident",
    "tool calls / incident",
    "distractor concluded",
)


def _pct(v: Any) -> str:
    return "–" if v is None else f"{100 * float(v):.1f}"


def _num(v: Any, digits: int = 2) -> str:
    return "–" if v is None else f"{float(v):.{digits}f}"


def _if_calibrated(n: Mapping[str, float] | None) -> str:
    return "–" if not n else f"{n['mean']:.3f} / {n['p95']:.3f} ({n['p']:.2f})"


def rows(card: Mapping[str, Any]) -> list[list[str]]:
    """One row per arm, in COLUMNS order."""
    out = []
    for arm, m in card["arms"].items():
        replay = "–" if m["replay_plan_ac1"] is None else (
            f"{_pct(m['replay_plan_ac1'])} / {_pct(m['replay_plan_ac3'])}"
        )  # fmt: skip
        out.append([
            arm,
            str(m["cases"]),
            _pct(m["plan_ac1"]),
            _pct(m["plan_ac3"]),
            replay,
            _pct(m["conclusion_accuracy"]),
            _pct(m["coverage"]),
            f"{_pct(m['validated_precision'])} ({m['validated']})",
            f"{_num(m['calibration_ece'], 3)} ({_num(m.get('calibration_ece_evidence'), 3)})",
            _if_calibrated(m.get("calibration_ece_if_calibrated")),
            _num(m["seconds_per_incident"]),
            _num(m["tool_calls_per_incident"], 1),
            "–" if not m["distractor_cases"] else _pct(m["distractor_concluded"]),
        ])  # fmt: skip
    return out


def _targets(card: Mapping[str, Any]) -> str:
    parts = []
    for name, t in card["targets"].items():
        met = {True: "met", False: "NOT met", None: "not measured"}[t["met"]]
        parts.append(f"{name.replace('_', ' ')} {t['target']}: {t['value']} ({met})")
    return "; ".join(parts)


def table(card: Mapping[str, Any]) -> Table:
    t = Table(title=f"{card['dataset']}: end to end through the API — {card['mode']}")
    for col in COLUMNS:
        t.add_column(col, justify="left" if col == "arm" else "right")
    for row in rows(card):
        t.add_row(*row)
    t.caption = "targets: " + _targets(card)
    return t


def markdown(card: Mapping[str, Any]) -> str:
    lines = [
        f"#### {card['dataset']} ({card['n_cases']} cases, {card['mode']})",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows(card)]
    lines += ["", "Targets: " + _targets(card) + "."]
    for arm, m in card["arms"].items():
        endings = ", ".join(f"{k} {v}" for k, v in sorted(m["endings"].items()))
        extra = (
            f"; distractor in band in {m.get('distractor_healthy', '–')} of "
            f"{m['distractor_cases']} (else the least moved service), in the plan's top 3 in "
            f"{_pct(m.get('distractor_in_plan_top3'))}%, Supported or Validated in "
            f"{_pct(m['distractor_supported'])}%"
            if m["distractor_cases"]
            else ""
        )
        lines.append(
            f"- {arm}: endings {endings}; {m['conclusions']} conclusions, "
            f"{_pct(m['conclusion_precision'])}% right; slowest incident "
            f"{_num(m['seconds_max'])} s{extra}"
        )
        shown = [f"{name.replace('_', ' ')} {_pct(ci[0])}–{_pct(ci[1])}"
                 for name, ci in (m.get("intervals") or {}).items() if ci]  # fmt: skip
        if shown:
            lines.append(f"  - 95% intervals (Wilson): {', '.join(shown)}")
    if card["cost"]:
        lines.append("- cost: " + ", ".join(f"{k} {v}" for k, v in card["cost"].items()))
    if card["skipped"]:
        lines.append(f"- skipped: {len(card['skipped'])}")
        lines += [f"  - {s['case_id']} ({s.get('arm', '')}): {s['reason']}"
                  for s in card["skipped"]]  # fmt: skip
    return "\n".join(lines) + "\n"
