"""StackGraph's errors, one tree, so callers catch what they can act on.

    StackGraphError
    ├── ConfigError            bad config file or setting
    ├── StoreError             the graph store
    │   ├── StoreStartError    embedded FalkorDB would not start (port, data dir, crash)
    │   └── StoreUnavailable   a configured or running server cannot be reached
    ├── LeaseHeldError         another writer holds the single-writer lease
    ├── LeaseLost              the writer's lease was taken over or could not be renewed
    ├── InputError             a source (file, directory, repo) is unusable
    └── SourceUnavailable      a live source (Prometheus, an API) is down or answered an error

Errors from redis/FalkorDB are translated at the store boundary; messages are one line
and name the cause.
"""

from __future__ import annotations


class StackGraphError(Exception):
    """Base of every error StackGraph raises on purpose."""


class ConfigError(StackGraphError):
    pass


class StoreError(StackGraphError):
    pass


class StoreStartError(StoreError):
    pass


class StoreUnavailable(StoreError):
    pass


class LeaseHeldError(StackGraphError):
    pass


class LeaseLost(StackGraphError):
    """The writer stopped: its lease was taken over, or renewals failed until too little
    of it was left to write safely."""


class InputError(StackGraphError):
    pass


class SourceUnavailable(StackGraphError):
    """A live source could not be read; the lane wrote nothing and changed no status."""
