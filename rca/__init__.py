"""The read path: alert → anchor → k-hop → signals → blame → ranked plan; agent; verification.

from stackgraph.rca import Alert, investigate
plan = investigate(store, Alert({"service": "checkout"}), hops=2)
plan.candidates[0].service, plan.candidates[0].signals, plan.candidates[0].evidence
"""

from .anchor import anchor_names, pod_base_names
from .clock import parse_time
from .collect import GENERATORS
from .investigate import Investigation, investigate
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
from .pipeline import combine
from .planner import Planner
from .programs import DEFAULT_PROGRAM, Program, ProgramError
from .scorers import Signal
from .windows import windows_for

__all__ = [
    "DEFAULT_PROGRAM",
    "EDGE_PREFIX",
    "GENERATORS",
    "Alert",
    "Candidate",
    "Evidence",
    "Investigation",
    "LogLine",
    "LogSource",
    "MetricsSource",
    "Plan",
    "Planner",
    "Program",
    "ProgramError",
    "Signal",
    "anchor_names",
    "clamp_hops",
    "combine",
    "investigate",
    "parse_time",
    "pod_base_names",
    "windows_for",
]
