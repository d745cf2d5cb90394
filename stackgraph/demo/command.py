"""`stackgraph demo`, offered to the CLI through the entry-point group `stackgraph.commands`.

Why an entry point: the demo is a client of the product, and nothing in the product may
import it. Registered in pyproject.toml, the command reaches `stackgraph`'s command list
the way a third party's would (`stackgraph.cli.app.add_installed_commands`), so the
product never names the demo, and `stackgraph demo` and `make demo` stay what they were.
This module stays light: the CLI loads it on every run, and the demo itself is imported
only when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stackgraph.cli.app import out, state_of

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
"""The example platform of a source checkout (`make demo` runs from one)."""


def demo(
    ctx: typer.Context,
    examples: Annotated[Path, typer.Option(help="Folder of the example platform.")] = EXAMPLES,
) -> None:
    """Ingest the bundled example platform and show what the graph now knows."""
    from .run import run_demo

    run_demo(state_of(ctx).settings(), examples, out)
