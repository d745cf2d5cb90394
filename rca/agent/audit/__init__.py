"""Stage-wise audit and repair of an investigation (after STAR): four typed artifacts,
a deterministic score per stage, routing by the total, and patches from operators."""

from .checks import DELTA, EPS, STAGES, TAU, WEIGHTS, Audit, StageScore, audit, route_of
from .repair import Outcome, Patch, Repair, RepairHint, Work, feasible_path, repair
from .run import audited, remembered, signature
from .stages import Claims, Stages, stages_of

__all__ = [
    "DELTA",
    "EPS",
    "STAGES",
    "TAU",
    "WEIGHTS",
    "Audit",
    "Claims",
    "Outcome",
    "Patch",
    "Repair",
    "RepairHint",
    "StageScore",
    "Stages",
    "Work",
    "audit",
    "audited",
    "feasible_path",
    "remembered",
    "repair",
    "route_of",
    "signature",
    "stages_of",
]
