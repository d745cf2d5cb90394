"""The `stackgraph` command line (typer + rich). Each command module registers on `app`."""

from __future__ import annotations

import sys

from stackgraph.errors import StackGraphError

from . import core as core
from . import memory as memory
from .app import app

__all__ = ["app", "main"]


def main() -> None:
    """Entry point: StackGraph errors become one line on stderr and exit code 2."""
    try:
        app()
    except StackGraphError as exc:
        message = " ".join(str(exc).split())
        sys.stderr.write(f"error: {message}\n")
        sys.exit(2)
