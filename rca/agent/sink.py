"""The only way evidence reaches a hypothesis: model-asserted evidence is refused, and a
conclusion needs a tool's support (`EvidenceSink.concludable`); the rules a hypothesis's
evidence is weighed by are in `evidence`."""

from __future__ import annotations

from dataclasses import dataclass, field

from .evidence import (
    CHANGE,
    LEADS,
    LLM_INFERRED,
    SHOWS_A_FAULT,
    Hypothesis,
    HypothesisState,
    ToolEvidence,
    Verdict,
    is_a_line,
)


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

    def concludable(self, hyp: Hypothesis) -> bool:
        """Whether `hyp` may be concluded (`unconcludable`)."""
        return self.unconcludable(hyp) is None

    def unconcludable(self, hyp: Hypothesis) -> str | None:
        """Why `hyp` may not be concluded, if it may not. It must be Supported or Validated,
        and verified by a source beyond the graph and memory wherever such a source judged
        any suspect in this investigation (tools that could verify did their work: the
        graph's support alone is the plan's claim read back). Where none could judge (a
        deployment with the graph alone), the graph's frontier check is all the checking
        there is, and the conclusion's confidence says how little that is. And it must have
        been open to refutation (`untested`)."""
        if hyp.state not in LEADS:
            return f"{hyp.suspect} is {hyp.state}"
        if not hyp._tally().pro_tools:
            return f"no tool supports {hyp.suspect}"
        judged = any(is_a_line(e.tool) and e.verdict != Verdict.INCONCLUSIVE
                     for h in self.hypotheses.values() for e in h.evidence)  # fmt: skip
        if not hyp.verified and judged:
            return (f"no tool on a source beyond the graph and memory supports "
                    f"{hyp.suspect}")  # fmt: skip
        return self.untested(hyp)

    def untested(self, hyp: Hypothesis) -> str | None:
        """Why a lead that rests on a change alone was never open to refutation, if it was
        not: wherever a source that shows a fault read any suspect, none read this one (a
        release on a service nothing measures is a lead to name, not a verified cause)."""
        pro = hyp._tally().pro
        if hyp.state not in LEADS or CHANGE not in pro or pro & SHOWS_A_FAULT:
            return None
        if hyp.health_read or not any(h.health_read for h in self.hypotheses.values()):
            return None
        shown = ", ".join(sorted(SHOWS_A_FAULT))
        return (
            f"{hyp.suspect} rests on a change alone, and no reading of its health "
            f"({shown}) exists to test it: a lead, not a verified cause"
        )

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
