"""`stackgraph eval`: replay a labelled dataset through the product path beside the baselines."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from .app import _progress, app, open_store, state_of

eval_app = typer.Typer(
    help="Replay labelled incidents (`--dataset`), or score memory retrieval (`eval memory`).",
    invoke_without_command=True,
)
app.add_typer(eval_app, name="eval")


@eval_app.callback()
def eval_cmd(
    ctx: typer.Context,
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset",
            help="nezha, nezha-tt, changerca, rcd-sockshop, seeded, or one registered under the "
            "`stackgraph.datasets` entry points (with --adapter: any name).",
        ),
    ] = None,
    path: Annotated[
        Path | None, typer.Option("--path", help="The dataset's folder (seeded: optional).")
    ] = None,
    adapter: Annotated[
        str | None,
        typer.Option("--adapter", help="module:function loading a folder into cases."),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N cases.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the scorecard as JSON.")] = False,
    ablation: Annotated[
        bool, typer.Option(help="Also StackGraph without each scorer, and each scorer alone.")
    ] = False,
) -> None:
    """AC@1/3/5, Avg@5 and MRR of StackGraph and every baseline on the same cases, through
    the product path: the dataset in a real Prometheus (Debian's prometheus + promtool),
    the lanes, an alert timed by the data, and the investigation the API runs."""
    from stackgraph.eval.harness import evaluate
    from stackgraph.eval.scorecard import markdown

    if ctx.invoked_subcommand is not None:
        return
    if dataset is None:
        raise typer.BadParameter("give --dataset NAME (or the `memory` subcommand)")
    settings = state_of(ctx).settings()
    # SIGTERM unwinds like Ctrl-C, so the Prometheus the replay started is stopped too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    with open_store(settings) as store, _progress() as bar:
        task = bar.add_task(f"replay {dataset}", total=None)

        def progress(done: int, total: int, case_id: str) -> Any:
            bar.update(task, completed=done, total=total, description=f"replay {case_id}")

        card = evaluate(dataset, path, store, settings=settings, adapter=adapter, limit=limit,
                        progress=progress, ablation=ablation)  # fmt: skip
    if as_json:
        sys.stdout.write(json.dumps(card, indent=2) + "\n")
        return
    sys.stdout.write(markdown(card) + "".join(f"\nnote: {n}" for n in card["notes"]) + "\n")
