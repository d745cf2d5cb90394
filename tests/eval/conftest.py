"""Fixtures for the evaluation tests: where the shared datasets live, loaded once per session."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from stackgraph.eval.datasets import DEFAULT_DIRS, Case, load_cases

_CACHE: dict[str, list[Case]] = {}
# Read at import time: the root conftest's autouse fixture clears STACKGRAPH_* for each test.
_ENV_ROOT = os.environ.get("STACKGRAPH_DATASETS")
_IN_CI = os.environ.get("CI", "").lower() == "true"


def datasets_root() -> Path:
    """``$STACKGRAPH_DATASETS`` or ``<repo>/../shared/datasets``."""
    if _ENV_ROOT:
        return Path(_ENV_ROOT)
    return Path(__file__).resolve().parents[2].parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def load_dataset() -> Callable[[str], list[Case]]:
    """Fixture: ``load_dataset(name)`` -> cases of that real dataset (cached, may skip)."""
    return _load_or_skip


def _load_or_skip(name: str) -> list[Case]:
    """Cases of a real dataset; skip if absent, unless CI=true (then fail)."""
    if name not in _CACHE:
        folder = datasets_root() / DEFAULT_DIRS[name]
        if not folder.is_dir():
            if _IN_CI:
                pytest.fail(f"dataset folder {folder} missing (CI=true)")
            pytest.skip(f"dataset folder {folder} not present")
        _CACHE[name] = load_cases(name, folder)
    return _CACHE[name]
