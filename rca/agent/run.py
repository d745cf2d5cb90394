"""What one investigation produced, and how it ended."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .audit.stages import Claims
from .evidence import Hypothesis
from .report import Report
from .sink import EvidenceSink


class Ending(StrEnum):
    CONCLUDED = "concluded"
    INSUFFICIENT_EVIDENCE = "insufficient_evidence"
    BUDGET_EXHAUSTED = "budget_exhausted"


@dataclass
class AgentRun:
    """Everything one investigation produced, model or not."""

    ending: Ending
    conclusion: str | None
    sink: EvidenceSink
    report: Report
    steps: int = 0
    llm_used: bool = False
    events: list[str] = field(default_factory=list)
    """What the machine did with each model turn (refusals, malformed calls...)."""
    claims: Claims = field(default_factory=Claims)
    """What the model stated beyond tool calls (the path, its confidence)."""
    audit: dict[str, Any] | None = None
    """The stage audit and its repairs (`audit.Outcome.as_dict`)."""

    @property
    def hypotheses(self) -> list[Hypothesis]:
        return self.sink.ranked()

    @property
    def conclusion_state(self) -> str:
        """The conclusion's state as the report states it ("" without one): its evidence's,
        which a rival keeps from Validated (`alike.conclusion_state`)."""
        stated = self.report.calibration
        return stated.state if stated is not None and self.conclusion else ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "ending": str(self.ending),
            "conclusion": self.conclusion,
            "steps": self.steps,
            "llm_used": self.llm_used,
            "hypotheses": [h.as_dict() for h in self.hypotheses],
            "rejected_evidence": [{**e.as_dict(), "reason": why} for e, why in self.sink.rejected],
            "events": self.events,
            "report": self.report.as_dict(),
            "audit": self.audit,
        }
