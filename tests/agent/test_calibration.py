"""The stated confidence: the evidence's, moved by earlier conclusions' feedback as a Beta
posterior whose prior is the evidence's rule of succession (two pseudo-observations)."""

from __future__ import annotations

import pytest

from stackgraph.rca.agent import OutcomeHistory


def test_without_feedback_the_evidence_speaks_alone() -> None:
    got = OutcomeHistory().calibrate(2 / 3, "Supported")
    assert got.stated == got.evidence == pytest.approx(0.6667, abs=1e-4)
    assert (got.earlier, got.right) == (0, 0)
    assert got.phrase() == "confidence 0.67"


def test_feedback_on_the_same_evidence_moves_it() -> None:
    history = OutcomeHistory.of(
        [("Supported", 2 / 3, True)] * 8 + [("Supported", 0.75, False)] * 5
        + [("Validated", 0.75, True)] * 4
    )  # fmt: skip
    right = history.calibrate(0.6667, "Supported")  # equal to three decimals: the same evidence
    assert (right.earlier, right.right) == (8, 8)
    assert right.stated == pytest.approx((8 + 2 * 0.6667) / (8 + 2), abs=1e-4)
    assert "8 of 8 earlier conclusion(s) on such evidence here were confirmed" in right.phrase()
    wrong = history.calibrate(0.75, "Supported")
    assert wrong.stated == pytest.approx(1.5 / 7, abs=1e-4) and wrong.right == 0
    assert history.calibrate(0.8, "Supported").stated == 0.8  # no conclusion on it yet
    # two lines and nothing against is other evidence than two lines and an objection
    validated = history.calibrate(0.75, "Validated")
    assert (validated.earlier, validated.right) == (4, 4)
    assert validated.stated == pytest.approx((4 + 1.5) / 6, abs=1e-4)
    assert [(c.state, c.evidence, c.earlier) for c in history.table()] == [
        ("Supported", 0.667, 8), ("Supported", 0.75, 5), ("Validated", 0.75, 4)
    ]  # fmt: skip


def test_a_few_outcomes_move_it_little_and_many_move_it_far() -> None:
    few = OutcomeHistory.of([("Supported", 0.75, False)]).calibrate(0.75, "Supported").stated
    many = OutcomeHistory.of([("Supported", 0.75, False)] * 50).calibrate(0.75, "Supported")
    assert 0.4 < few < 0.75 and many.stated < 0.03
