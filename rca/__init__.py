"""The read path: alert → anchor → k-hop → signals → blame → ranked plan; agent; verification.

from stackgraph.rca import Alert, investigate
plan = investigate(store, Alert({"service": "checkout"}), hops=2)
plan.candidates[0].service, plan.candidates[0].signals, plan.candidates[0].evidence
"""

from .anchor import anchor_names, pod_base_names
from .clock import parse_time
from .collect import GENERATORS
from .investigate import investigate, windows_for
from .model import (
    EDGE_PREFIX,
    Alert,
    Candidate,
    Evidence,
    LogLine,
    LogSource,
    MetricsSource,
    Plan,
)
from .neighbourhood import clamp_hops
from .pipeline import DEFAULT, PLAYBOOKS, SCORERS, Playbook, combine
from .planner import Planner
from .scorers import Signal

__all__ = [
    "DEFAULT",
    "EDGE_PREFIX",
    "GENERATORS",
    "PLAYBOOKS",
    "SCORERS",
    "Alert",
    "Candidate",
    "Evidence",
    "LogLine",
    "LogSource",
    "MetricsSource",
    "Plan",
    "Planner",
    "Playbook",
    "Signal",
    "anchor_names",
    "clamp_hops",
    "combine",
    "investigate",
    "parse_time",
    "pod_base_names",
    "windows_for",
]
