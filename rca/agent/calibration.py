"""The confidence an incident states: the evidence's, corrected by how often conclusions on
the same evidence were confirmed on this platform.

The evidence gives a hypothesis its confidence by Laplace's rule of succession over the
independent sources that judged (`evidence.Hypothesis.confidence`): an estimate that
stands on two imagined observations, one for and one against. Feedback adds real ones. The
conclusions this platform's users confirmed or rejected, among those on the same evidence
(the same state and confidence: a Validated 3/4, two lines and nothing against, is not a
Supported 3/4, two lines and an objection), are observations of the same quantity, so they
are combined as a Beta posterior whose prior is the evidence's estimate with the rule's own
weight:

    stated = (right + PRIOR_OBSERVATIONS * evidence) / (earlier + PRIOR_OBSERVATIONS)

No history: the evidence's confidence, unchanged. With history it moves towards what was
seen, faster the more was seen (Bayesian histogram binning, one bin per state and evidence
confidence; nothing fitted). The state (Validated, Supported) stays the conclusion's (its
evidence's, which a rival weighed alike keeps from Validated: `alike`): feedback calibrates
what the agent says, not what its tools found.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["PRIOR_OBSERVATIONS", "Calibrated", "OutcomeHistory"]

PRIOR_OBSERVATIONS = 2.0
"""The weight of the evidence's own estimate: the rule of succession's two pseudo-counts."""
DIGITS = 3
"""Evidence confidences are ratios of small counts (2/3, 3/4, 1/2 ...): equal to this many
decimals is the same evidence."""


@dataclass(frozen=True)
class Calibrated:
    """A conclusion's confidence: the evidence's, and the one stated after feedback."""

    evidence: float
    stated: float
    earlier: int = 0
    """Earlier conclusions on the same evidence that got feedback."""
    right: int = 0
    """Of those, how many were confirmed."""
    state: str = ""
    """The conclusion's state (Validated, Supported): half of what "the same evidence" is."""

    def phrase(self) -> str:
        if not self.earlier:
            return f"confidence {self.stated:.2f}"
        return (f"confidence {self.stated:.2f}: the evidence's {self.evidence:.2f}, and "
                f"{self.right} of {self.earlier} earlier conclusion(s) on such evidence here "
                "were confirmed")  # fmt: skip

    def as_dict(self) -> dict[str, str | float | int]:
        return {"state": self.state, "evidence": self.evidence, "stated": self.stated,
                "earlier": self.earlier, "right": self.right}  # fmt: skip


@dataclass(frozen=True)
class OutcomeHistory:
    """Earlier conclusions with feedback: (their state, the evidence's confidence,
    confirmed?)."""

    outcomes: tuple[tuple[str, float, bool], ...] = ()

    @classmethod
    def of(cls, outcomes: Iterable[tuple[str, float, bool]]) -> OutcomeHistory:
        return cls(tuple((str(st), round(float(c), DIGITS), bool(ok)) for st, c, ok in outcomes))

    def table(self) -> list[Calibrated]:
        """Per evidence seen (state, confidence): what a conclusion on it states now, on what."""
        seen = sorted({(st, c) for st, c, _ in self.outcomes})
        return [self.calibrate(c, st) for st, c in seen]

    def calibrate(self, evidence: float, state: str) -> Calibrated:
        key = (state, round(float(evidence), DIGITS))
        same = [ok for st, c, ok in self.outcomes if (st, c) == key]
        right = sum(same)
        stated = (right + PRIOR_OBSERVATIONS * evidence) / (len(same) + PRIOR_OBSERVATIONS)
        return Calibrated(round(evidence, 4), round(stated, 4), len(same), right, state)
