"""What is learned (after OpsHarness): trajectories of every investigation, layered
knowledge K0-K3 as versioned data, and the miners that turn labelled trajectories into
proposals. How a proposal is judged is `stackgraph.eval.gates`.

    k = live(store)                                  # the version in use (or the shipped one)
    for p in mine(trajectories(store), k, playbook_names()):
        verdict = judge(p, k, replay, testbed(...))  # stackgraph.eval.gates
"""

from .evolution import MIN_SOURCES, Proposal, apply, mine
from .items import ANY, KINDS, TIERS, Item, Knowledge, shipped
from .store import (
    LIVE,
    LiveKnowledge,
    live,
    outcome_history,
    promotion_records,
    trajectories,
    version,
    versions,
)
from .trajectory import (
    LABELS,
    Step,
    Trajectory,
    label_of,
    trajectory_node,
    trajectory_of,
    trajectory_records,
)

__all__ = [
    "ANY",
    "KINDS",
    "LABELS",
    "LIVE",
    "MIN_SOURCES",
    "TIERS",
    "Item",
    "Knowledge",
    "LiveKnowledge",
    "Proposal",
    "Step",
    "Trajectory",
    "apply",
    "label_of",
    "live",
    "mine",
    "outcome_history",
    "promotion_records",
    "shipped",
    "trajectories",
    "trajectory_node",
    "trajectory_of",
    "trajectory_records",
    "version",
    "versions",
]
