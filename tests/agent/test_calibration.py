"""The stated confidence: the evidence's, moved by earlier conclusions' feedback as a Beta
posterior whose prior is the evidence's rule of succession (two pseudo-observations)."""

from __future__ import annotations

import pytest

from stackgraph.rca.agent import OutcomeHistory


def test_without_feedback_the_evidence_speaks_alone() -> None:
    got = OutcomeHistory().calibrate(2 / 3)
    assert got.stated == got.evidence == pytest.approx(0.6667, abs=1e-4)
    assert (got.earlier, got.right) == (0, 0)
    assert got.phrase() == "confidence 0.67"


def test_feedback_on_the_same_evidence_moves_it() -> None:
    history = OutcomeHistory.of([(2 / 3, True)] * 8 + [(0.75, False)] * 5)
    right = history.calibrate(0.6667)  # equal to three decimals: the same evidence
    assert (right.earlier, right.right) == (8, 8)
    assert right.stated == pytest.approx((8 + 2 * 0.6667) / (8 + 2), abs=1e-4)
    assert "8 of 8 earlier conclusion(s) on such evidence here were confirmed" in right.phrase()
    wrong = history.calibrate(0.75)
    assert wrong.stated == pytest.approx(1.5 / 7, abs=1e-4) and wrong.right == 0
    assert history.calibrate(0.8).stated == 0.8  # no conclusion on that evidence yet


def test_a_few_outcomes_move_it_little_and_many_move_it_far() -> None:
    few = OutcomeHistory.of([(0.75, False)]).calibrate(0.75).stated
    many = OutcomeHistory.of([(0.75, False)] * 50).calibrate(0.75).stated
    assert 0.4 < few < 0.75 and many < 0.03
