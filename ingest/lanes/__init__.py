"""Lanes: pure functions from a source snapshot to records, registered by name."""

from . import catalog as catalog
from . import change as change
from . import code as code
from . import infra as infra
from . import telemetry as telemetry
from .registry import LANES, AfterWrite, Lane, LaneInputs, register, resolve

__all__ = ["LANES", "AfterWrite", "Lane", "LaneInputs", "register", "resolve"]
