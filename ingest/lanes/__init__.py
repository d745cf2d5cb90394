"""Lanes: pure functions from a source snapshot to records, registered by name."""

from . import catalog as catalog
from . import code as code
from .registry import LANES, Lane, LaneInputs, register, resolve

__all__ = ["LANES", "Lane", "LaneInputs", "register", "resolve"]
