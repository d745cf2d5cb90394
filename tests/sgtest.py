"""Helpers every test folder shares (a module of its own: several folders have a conftest)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
IN_CI = os.environ.get("CI", "").lower() == "true"


def require(condition: bool, what: str) -> None:
    """Skip when a component is missing locally; in CI a missing component is a failure."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"{what} is required in CI (make test installs it)")
    pytest.skip(f"{what} is not available")
