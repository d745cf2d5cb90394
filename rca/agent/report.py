"""The templated report: a ranked diagnosis, symptom → pivot evidence → root cause, and
three actions (mitigate now, fix for good, prevent) each tied to the evidence behind it.

Works with or without a model; the model's narration, when there is one, is appended.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stackgraph.rca.model import Alert

from .alike import Calls, conclusion_state, no_calls, rivals
from .calibration import Calibrated, OutcomeHistory
from .evidence import Hypothesis, ToolEvidence, Verdict
from .sink import EvidenceSink


@dataclass(frozen=True)
class Action:
    kind: str
    """immediate | permanent | prevention"""
    text: str
    because: str
    """The evidence this action rests on."""


@dataclass
class Report:
    diagnosis: list[dict[str, Any]]
    summary: str
    actions: list[Action]
    ending: str
    narration: str = ""
    notes: list[str] = field(default_factory=list)
    similar: list[dict[str, Any]] = field(default_factory=list)
    """Similar past incidents found by memory search (hits' dicts), cited as found."""
    calibration: Calibrated | None = None
    """The conclusion's confidence: the evidence's and the one stated (`calibration`)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "diagnosis": self.diagnosis,
            "summary": self.summary,
            "actions": [a.__dict__ for a in self.actions],
            "ending": self.ending,
            "narration": self.narration,
            "notes": self.notes,
            "similar": self.similar,
            "calibration": self.calibration.as_dict() if self.calibration else None,
            "text": self.text(),
        }

    def text(self) -> str:
        lines = ["## Diagnosis"]
        for d in self.diagnosis:
            lines.append(
                f"{d['rank']}. {d['suspect']} — {d['state']} (confidence {d['confidence']:.2f}, "
                f"{d['supports']} supporting / {d['refutes']} refuting checks)"
            )
        lines += ["", "## Summary", self.summary, "", "## Actions"]
        lines += [f"- **{a.kind}**: {a.text} _(because: {a.because})_" for a in self.actions]
        if self.similar:
            lines += ["", "## Similar past incidents"]
            lines += [similar_line(h) for h in self.similar]
        if self.narration:
            lines += ["", "## Narration", self.narration]
        if self.notes:
            lines += ["", "## Notes", *[f"- {n}" for n in self.notes]]
        return "\n".join(lines)


def similar_line(hit: dict[str, Any]) -> str:
    """One cited past incident: what it was, what caused it, why it matched."""
    cause = hit.get("root_cause") or "unknown"
    fix = f"; resolution: {hit['resolution']}" if hit.get("resolution") else ""
    why = ", ".join(str(w) for w in hit.get("why", [])) or "-"
    return (
        f"- {hit.get('incident')} on {hit.get('service') or '?'}: {hit.get('symptom') or '-'} "
        f"(root cause: {cause}{fix}) _(matched by {why})_"
    )


def signature(alert: Alert) -> str:
    """Alerts that are alike (repair memory, trajectories, knowledge): the same alert on
    the same service."""
    return f"{dict(alert.labels).get('alertname', 'alert')}:{symptom_of(alert)[0]}"


def symptom_of(alert: Alert) -> tuple[str, str]:
    labels = dict(alert.labels)
    service = labels.get("service") or labels.get("job") or labels.get("app") or "?"
    what = alert.annotations.get("summary") or labels.get("alertname", "alert")
    return service, f"{labels.get('alertname', 'alert')} on {service} ({what})"


def _pivot(h: Hypothesis) -> ToolEvidence | None:
    order = ["git_show", "git_log", "k8s_pod_status", "prometheus_query", "query_stack_graph"]
    pro = [e for e in h.evidence if e.verdict == Verdict.SUPPORTS]
    if not pro:
        return None
    return sorted(pro, key=lambda e: order.index(e.tool) if e.tool in order else 99)[0]


def _actions(symptom: str, h: Hypothesis | None) -> list[Action]:
    if h is None:
        return [
            Action("immediate", f"Mitigate at the symptom: scale or shed load on {symptom} and "
                   "page its owner.", "no hypothesis reached supporting evidence"),
            Action("permanent", "Run the suggested checks by hand; the graph's candidates are "
                   "in the diagnosis.", "insufficient evidence"),
            Action("prevention", f"Add the missing telemetry (traces, metrics) around {symptom} "
                   "so the next alert can be verified.", "checks returned no data"),
        ]  # fmt: skip
    s = h.suspect
    pro = {e.tool: e for e in h.evidence if e.verdict == Verdict.SUPPORTS}
    commit = pro.get("git_show") or pro.get("git_log")
    if commit is not None:
        sha = str(commit.data.get("sha") or (commit.data.get("recent") or [{}])[0].get("sha", ""))
        return [
            Action("immediate", f"Roll back {s} to the revision before {sha[:10]}.",
                   commit.result_summary),
            Action("permanent", f"Fix commit {sha[:10]} in {commit.data.get('repo', s)} and add a "
                   "regression test for the failing path.", commit.result_summary),
            Action("prevention", f"Gate {s} rollouts on its error rate and p95 (canary with "
                   "automatic rollback).", commit.result_summary),
        ]  # fmt: skip
    pods = pro.get("k8s_pod_status") or pro.get("k8s_events") or pro.get("k8s_logs")
    if pods is not None:
        return [
            Action("immediate", f"Restart or scale out {s}; check its resource limits.",
                   pods.result_summary),
            Action("permanent", f"Fix what crashes {s} (limits, leaks, failing dependency) per "
                   "the pod state.", pods.result_summary),
            Action("prevention", f"Alert on {s} restarts and readiness before callers fail.",
                   pods.result_summary),
        ]  # fmt: skip
    pivot = _pivot(h)
    because = pivot.result_summary if pivot else "supporting evidence"
    return [
        Action("immediate", f"Protect {symptom} from {s}: tighten timeouts / open the circuit "
               f"breaker, and roll back {s}'s latest change if any.", because),
        Action("permanent", f"Repair {s} (the failing calls measured into it).", because),
        Action("prevention", f"Add an SLO alert on calls into {s} so it pages before "
               f"{symptom} does.", because),
    ]  # fmt: skip


def build_report(
    alert: Alert,
    sink: EvidenceSink,
    ending: str,
    conclusion: str | None,
    narration: str = "",
    history: OutcomeHistory | None = None,
    calls: Calls = no_calls,
) -> Report:
    """The report; the conclusion's confidence is stated as `history` calibrates it (the
    evidence's alone without one), and its state is the evidence's unless a lead weighed
    alike stands beside it (`alike.rivals`: the plan's rank chose, so it is not Validated)."""
    ranked = sink.ranked()
    diagnosis = [
        {
            "rank": i + 1,
            "suspect": h.suspect,
            "state": str(h.state),
            "confidence": h.confidence,
            "supports": sum(e.verdict == Verdict.SUPPORTS for e in h.evidence),
            "refutes": sum(e.verdict == Verdict.REFUTES for e in h.evidence),
        }
        for i, h in enumerate(ranked)
    ]
    symptom, symptom_text = symptom_of(alert)
    chosen = sink.hypotheses.get(conclusion) if conclusion else None
    calibrated: Calibrated | None = None
    if chosen is not None:
        others = rivals(sink, conclusion, calls)
        state = conclusion_state(chosen, others)
        calibrated = (history or OutcomeHistory()).calibrate(chosen.confidence, str(state))
        pivot = _pivot(chosen)
        alike = (f"; {', '.join(others)} stood as well on the evidence, and the plan's rank "
                 "chose" if others else "")  # fmt: skip
        summary = (
            f"Symptom: {symptom_text}. Pivot evidence: "
            f"{pivot.result_summary if pivot else '-'} ({pivot.tool if pivot else '-'}). "
            f"Root cause: {chosen.suspect} ({state}, {calibrated.phrase()}{alike})."
        )
    else:
        checked = len(sink.all_evidence)
        summary = (
            f"Symptom: {symptom_text}. Insufficient evidence: {checked} check(s) ran and none "
            f"confirmed a root cause ({ending})."
        )
    notes = [f"rejected evidence from {e.tool}: {why}" for e, why in sink.rejected]
    notes += [why for h in ranked for why in (*h.unmoved(), *h.unsettled())]
    notes += [why for h in ranked if (why := sink.untested(h))]
    return Report(
        diagnosis,
        summary,
        _actions(symptom, chosen),
        ending,
        narration,
        notes,
        calibration=calibrated,
    )
