"""End-to-end replay of labelled incidents through the API (issue 12, part 1).

    card = run_e2e("seeded", None, store, settings=settings, limit=3)
    card["arms"]["clean"]["conclusion_accuracy"], card["targets"]

Each case's world goes through the lanes into a graph of its own (with a Git monorepo of
its releases), `stackgraph serve`'s app investigates the case's alert as Alertmanager
delivers it, and the incident it ends as is scored (`score`); a second arm adds an
unrelated recent deploy of a healthy service (`world`).
"""

from .api import run_incident, serving, webhook
from .render import markdown, table
from .run import ARMS, run_e2e
from .score import TARGETS, Outcome, arm_metrics, ece, ece_if_calibrated, scorecard
from .world import DISTRACTOR_LEAD_S, Distractor, build_world, pick_distractor

__all__ = [
    "ARMS",
    "DISTRACTOR_LEAD_S",
    "TARGETS",
    "Distractor",
    "Outcome",
    "arm_metrics",
    "build_world",
    "ece",
    "ece_if_calibrated",
    "markdown",
    "pick_distractor",
    "run_e2e",
    "run_incident",
    "scorecard",
    "serving",
    "table",
    "webhook",
]
