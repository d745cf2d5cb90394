"""The read path: alert → anchor → k-hop → signals → blame → ranked plan; agent; verification."""

from .investigate import investigate
from .model import Alert, Candidate, Evidence, MetricsSource, Plan

__all__ = ["Alert", "Candidate", "Evidence", "MetricsSource", "Plan", "investigate"]
