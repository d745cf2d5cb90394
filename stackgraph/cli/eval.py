"""`stackgraph eval`: replay a labelled dataset through the read path beside the baselines."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from .app import app, open_store, out, state_of

eval_app = typer.Typer(
    help="Replay labelled incidents (`--dataset`), or score memory retrieval (`eval memory`).",
    invoke_without_command=True,
)
app.add_typer(eval_app, name="eval")


@eval_app.callback()
def eval_cmd(
    ctx: typer.Context,
    dataset: Annotated[
        str | None, typer.Option("--dataset", help="nezha, changerca, rcd-sockshop or seeded.")
    ] = None,
    path: Annotated[
        Path | None, typer.Option("--path", help="The dataset's folder (seeded: optional).")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N cases.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the scorecard as JSON.")] = False,
) -> None:
    """AC@1/3/5, Avg@5 and MRR of StackGraph and every baseline on the same cases."""
    from stackgraph.eval.harness import DATASETS, evaluate
    from stackgraph.eval.scorecard import markdown

    if ctx.invoked_subcommand is not None:
        return
    if dataset is None:
        raise typer.BadParameter("give --dataset NAME (or the `memory` subcommand)")
    if dataset not in DATASETS:
        raise typer.BadParameter(f"unknown dataset {dataset!r}; known: {', '.join(DATASETS)}")
    settings = state_of(ctx).settings()
    with open_store(settings) as store:
        card = evaluate(dataset, path, store, settings=settings, limit=limit)
    if as_json:
        sys.stdout.write(json.dumps(card, indent=2) + "\n")
        return
    out.print(markdown(card), markup=False, highlight=False)
    for note in card["notes"]:
        out.print(f"note: {note}", markup=False)
