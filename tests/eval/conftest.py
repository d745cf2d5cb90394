"""Fixtures for the evaluation tests: where the shared datasets live, loaded once per session."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sgtest import dataset_folder

from stackgraph.eval.datasets import DEFAULT_DIRS, Case, load_cases

_CACHE: dict[str, list[Case]] = {}


@pytest.fixture(scope="session")
def load_dataset() -> Callable[[str], list[Case]]:
    """Fixture: ``load_dataset(name)`` -> cases of that real dataset (cached, may skip)."""
    return _load_or_skip


def _load_or_skip(name: str) -> list[Case]:
    """Cases of a real dataset; skip if absent, unless CI=true (then fail)."""
    if name not in _CACHE:
        _CACHE[name] = load_cases(name, dataset_folder(DEFAULT_DIRS[name]))
    return _CACHE[name]
