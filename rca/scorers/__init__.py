"""Scorers: pure functions from gathered facts to votes per candidate, with evidence, or an
abstention saying why. Nothing here touches the store or the network.

Each scorer may read the signals scored before it (blame and traversal read anomaly and
telemetry); `rca.fusion` turns the votes into one ranking.
"""

from .anomaly import anomaly
from .blame import blame
from .change import change
from .history import history
from .logs import logs
from .onset import onset
from .signal import STALE_FACTOR, Scorer, Signal, all_nodes, votes
from .telemetry import telemetry
from .topology import topology
from .traces import centrality, failed_calls, instability, self_time
from .traversal import traversal

__all__ = [
    "STALE_FACTOR",
    "Scorer",
    "Signal",
    "all_nodes",
    "anomaly",
    "blame",
    "centrality",
    "change",
    "failed_calls",
    "history",
    "instability",
    "logs",
    "onset",
    "self_time",
    "telemetry",
    "topology",
    "traversal",
    "votes",
]
