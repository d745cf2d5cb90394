"""Labelled RCA datasets as neutral in-memory ``Case`` objects.

``load_cases("nezha", Path(".../datasets/nezha"))`` returns the cases of one dataset folder.
Adding a dataset = one module with ``load(path: Path) -> list[Case]`` plus one line in
``ADAPTERS``. Window rules and the spreading of service-level signals onto call edges are
shared and documented in ``_common``; each adapter's docstring says which of its columns
became which signal (``POD_SIGNALS``, ``SERVICE_SIGNALS``, ``EDGE_SIGNALS``) and what was
left out.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from . import changerca, nezha, nezha_tt, rcd_sockshop
from .model import (
    EDGE_SIGNALS,
    METRIC_KINDS,
    POD_SIGNALS,
    SERVICE_SIGNALS,
    SIGNAL_KIND,
    USER,
    CallEdge,
    Case,
    ChangeEvent,
    DatasetError,
    MetricSeries,
    series,
)


class DatasetAdapter(Protocol):
    """Loads one dataset folder into cases; raises DatasetError if the folder is wrong."""

    def __call__(self, path: Path) -> list[Case]: ...


ADAPTERS: dict[str, Callable[[Path], list[Case]]] = {
    nezha.NAME: nezha.load,
    nezha_tt.NAME: nezha_tt.load,
    changerca.NAME: changerca.load,
    rcd_sockshop.NAME: rcd_sockshop.load,
}

# Default sub-folder of the shared datasets directory for each adapter.
DEFAULT_DIRS: dict[str, str] = {
    nezha.NAME: "nezha",
    nezha_tt.NAME: "nezha-tt",
    changerca.NAME: "changerca-ob",
    rcd_sockshop.NAME: "rcd-sockshop",
}


def load_cases(name: str, path: Path) -> list[Case]:
    """Load dataset ``name`` from folder ``path``.

    Raises DatasetError naming the path and what is missing when the folder is wrong, and
    for unknown dataset names.
    """
    if name not in ADAPTERS:
        raise DatasetError(f"unknown dataset {name!r}; known: {', '.join(sorted(ADAPTERS))}")
    p = Path(path)
    if not p.is_dir():
        raise DatasetError(f"dataset {name!r}: folder {p} does not exist")
    return ADAPTERS[name](p)


__all__ = [
    "ADAPTERS",
    "DEFAULT_DIRS",
    "EDGE_SIGNALS",
    "METRIC_KINDS",
    "POD_SIGNALS",
    "SERVICE_SIGNALS",
    "SIGNAL_KIND",
    "USER",
    "CallEdge",
    "Case",
    "ChangeEvent",
    "DatasetAdapter",
    "DatasetError",
    "MetricSeries",
    "load_cases",
    "series",
]
