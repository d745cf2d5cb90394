"""Evidence and hypotheses: states and confidence derived from tool verdicts only.

    Candidate ──supports──▶ Supported ──supports from a 2nd source──▶ Validated
        └──────refutes────▶ Refuted

Independence is counted by line of evidence, not by tool: git_log and git_show read the same
commits, so together they are one line and cannot validate a suspect on their own.

The model cannot move a hypothesis: the sink refuses evidence whose source is
`LlmInferred`, and every accepted item carries a verdict computed by the tool's own check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

LLM_INFERRED = "LlmInferred"
SAME_RECORD = {"git_log": "git", "git_show": "git"}
"""Tools that read the same record: one line of evidence between them."""
ROOT_CAUSE_MIN_CONFIDENCE = 0.40


class Verdict(StrEnum):
    SUPPORTS = "supports"
    REFUTES = "refutes"
    INCONCLUSIVE = "inconclusive"


class HypothesisState(StrEnum):
    CANDIDATE = "Candidate"
    SUPPORTED = "Supported"
    REFUTED = "Refuted"
    VALIDATED = "Validated"


@dataclass(frozen=True)
class ToolEvidence:
    """One tool call read against one hypothesis (the design's `Evidence` of the agent)."""

    tool: str
    verdict: Verdict
    result_summary: str
    source: str
    check: str = ""
    """Which check produced the verdict; with `tool`, the EVIDENCED_BY edge key."""
    hypothesis: str = ""
    """The suspect (service name) the verdict is about."""
    status: str = "success"
    data: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "check": self.check,
            "hypothesis": self.hypothesis,
            "verdict": str(self.verdict),
            "result_summary": self.result_summary,
            "source": self.source,
            "status": self.status,
        }


@dataclass
class Hypothesis:
    """A suspect root cause with its plan rank and accumulated evidence."""

    suspect: str
    rank: int
    prior: float = 0.0
    kind: str = "Service"
    suggested_tools: Sequence[str] = ()
    evidence: list[ToolEvidence] = field(default_factory=list)

    @property
    def suspect_ref(self) -> str:
        return f"{self.kind}:{self.suspect}"

    def _tools(self, verdict: Verdict) -> set[str]:
        """Tools that gave `verdict`. A tool that supports through one check is not also
        counted against: one signal normal (latency) beside one bad (errors) is no evidence
        against the suspect (a service can fail fast)."""
        pro = {e.tool for e in self.evidence if e.verdict == Verdict.SUPPORTS}
        if verdict == Verdict.SUPPORTS:
            return pro
        return {e.tool for e in self.evidence if e.verdict == verdict} - pro

    def _lines(self, verdict: Verdict) -> set[str]:
        """Independent lines of evidence behind `verdict` (tools reading the same record
        count once)."""
        return {SAME_RECORD.get(tool, tool) for tool in self._tools(verdict)}

    @property
    def state(self) -> HypothesisState:
        pro, con = len(self._tools(Verdict.SUPPORTS)), len(self._tools(Verdict.REFUTES))
        if pro == 0 and con == 0:
            return HypothesisState.CANDIDATE
        if con >= pro:
            return HypothesisState.REFUTED
        if len(self._lines(Verdict.SUPPORTS)) >= 2 and con == 0:
            return HypothesisState.VALIDATED
        return HypothesisState.SUPPORTED

    @property
    def confidence(self) -> float:
        """From evidence: each supporting tool adds, each refuting one takes away; the
        plan's prior only breaks ties (it is at most 0.1)."""
        pro, con = len(self._lines(Verdict.SUPPORTS)), len(self._tools(Verdict.REFUTES))
        extra = len(self._tools(Verdict.SUPPORTS)) - pro  # more tools on the same record
        raw = 0.25 * pro + 0.05 * extra - 0.3 * con + 0.1 * max(0.0, min(1.0, self.prior))
        if pro == 0:
            raw = min(raw, 0.1)
        return round(max(0.0, min(0.95, raw)), 3)

    @property
    def has_hard_evidence(self) -> bool:
        return bool(self._tools(Verdict.SUPPORTS))

    def as_dict(self) -> dict[str, Any]:
        return {
            "suspect": self.suspect,
            "suspect_ref": self.suspect_ref,
            "kind": self.kind,
            "rank": self.rank,
            "state": str(self.state),
            "confidence": self.confidence,
            "evidence": [e.as_dict() for e in self.evidence],
        }


class EvidenceRejected(ValueError):
    """Evidence the sink refuses (model-asserted, or about no known hypothesis)."""


@dataclass
class EvidenceSink:
    """The only way evidence reaches a hypothesis."""

    hypotheses: dict[str, Hypothesis] = field(default_factory=dict)
    rejected: list[tuple[ToolEvidence, str]] = field(default_factory=list)

    def add(self, ev: ToolEvidence) -> Hypothesis:
        if ev.source == LLM_INFERRED:
            reason = "evidence asserted by the model (LlmInferred) never counts"
            self.rejected.append((ev, reason))
            raise EvidenceRejected(reason)
        hyp = self.hypotheses.get(ev.hypothesis)
        if hyp is None:
            reason = f"no hypothesis about {ev.hypothesis!r}"
            self.rejected.append((ev, reason))
            raise EvidenceRejected(reason)
        hyp.evidence.append(ev)
        return hyp

    def ensure(self, suspect: str, kind: str = "Service") -> Hypothesis:
        """A suspect the model or a tool brought up that the plan did not rank."""
        if suspect not in self.hypotheses:
            self.hypotheses[suspect] = Hypothesis(suspect, len(self.hypotheses) + 1, kind=kind)
        return self.hypotheses[suspect]

    def ranked(self) -> list[Hypothesis]:
        order = {
            HypothesisState.VALIDATED: 0,
            HypothesisState.SUPPORTED: 1,
            HypothesisState.CANDIDATE: 2,
            HypothesisState.REFUTED: 3,
        }
        return sorted(
            self.hypotheses.values(), key=lambda h: (order[h.state], -h.confidence, h.rank)
        )

    @property
    def all_evidence(self) -> list[ToolEvidence]:
        return [e for h in self.hypotheses.values() for e in h.evidence]
