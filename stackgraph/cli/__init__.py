"""The `stackgraph` command line (typer + rich). Each command module registers on `app`."""

from __future__ import annotations

import sys

from stackgraph.errors import LeaseHeldError, LeaseLost, StackGraphError

from . import code as code
from . import core as core
from . import eval as eval
from . import investigate as investigate
from . import knowledge as knowledge
from . import memory as memory
from . import program as program
from . import schedule as schedule
from . import serve as serve
from .app import add_installed_commands, app

__all__ = ["EXIT_LEASE_HELD", "app", "main"]

EXIT_LEASE_HELD = 75
"""EX_TEMPFAIL: another writer holds the lease, or this writer lost it; retrying later will
do (CronJobs rely on it)."""


def main() -> None:
    """Entry point: StackGraph errors become one line on stderr and exit code 2
    (75 when another writer holds the lease or this one lost it). Commands installed under
    the entry-point group `stackgraph.commands` (the demo) join the built-in ones first."""
    add_installed_commands(app)
    try:
        app()
    except (LeaseHeldError, LeaseLost) as exc:
        sys.stderr.write(f"error: {' '.join(str(exc).split())}\n")
        sys.exit(EXIT_LEASE_HELD)
    except StackGraphError as exc:
        message = " ".join(str(exc).split())
        sys.stderr.write(f"error: {message}\n")
        sys.exit(2)
