"""`stackgraph eval`: replay a labelled dataset through the product path beside the baselines."""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from .app import _progress, app, open_store, out, state_of


@contextmanager
def replaying(settings: Any, verb: str, dataset: str) -> Iterator[tuple[Any, Any]]:
    """The store and a progress callback `(done, total, case_id)` for a replay command; a
    SIGTERM unwinds like Ctrl-C, so the Prometheus the replay started is stopped too."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    with open_store(settings) as store, _progress() as bar:
        task = bar.add_task(f"{verb} {dataset}", total=None)

        def progress(done: int, total: int, case_id: str) -> None:
            bar.update(task, completed=done, total=total, description=f"{verb} {case_id}")

        yield store, progress


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
    attempts: Annotated[
        int,
        typer.Option(help="Attempts per case for Accuracy@3,i (program stages 1-3; 0: none)."),
    ] = 3,
    feedback: Annotated[
        bool,
        typer.Option(
            help="Each case's graph also holds the root causes confirmed for the cases before "
            "it, as users' feedback leaves them (what the history prior reads; off: no plan "
            "sees a label)."
        ),
    ] = False,
    only: Annotated[
        str | None,
        typer.Option(
            help="Keep only these sources of each case, as a platform recording nothing else: "
            "metric kinds (latency, errors, workload, cpu, memory, network), logs, traces, "
            "releases; `golden` = latency,errors,workload. Every method reads the same."
        ),
    ] = None,
    topology: Annotated[
        bool,
        typer.Option(
            help="--no-topology: leave out the call graph and the manifests the dataset "
            "states, as a platform whose calls no tracer sees (the graph holds the calls "
            "the metrics measured and the services the cluster lists)."
        ),
    ] = True,
) -> None:
    """AC@1/3/5, Avg@5 and MRR of StackGraph and every baseline on the same cases, through
    the product path: the dataset in a real Prometheus (Debian's prometheus + promtool),
    the lanes, an alert timed by the data, and the investigation the API runs."""
    from stackgraph.eval.harness import evaluate
    from stackgraph.eval.narrowed import sources_from
    from stackgraph.eval.scorecard import markdown

    if ctx.invoked_subcommand is not None:
        return
    if dataset is None:
        raise typer.BadParameter("give --dataset NAME (or the `memory` subcommand)")
    keep = sources_from(only)
    settings = state_of(ctx).settings()
    with replaying(settings, "replay", dataset) as (store, progress):
        card = evaluate(dataset, path, store, settings=settings, adapter=adapter, limit=limit,
                        progress=progress, ablation=ablation, attempts=max(0, attempts),
                        feedback=feedback, only=keep, topology=topology)  # fmt: skip
    if as_json:
        sys.stdout.write(json.dumps(card, indent=2) + "\n")
        return
    sys.stdout.write(markdown(card) + "".join(f"\nnote: {n}" for n in card["notes"]) + "\n")


@eval_app.command("e2e")
def eval_e2e(
    ctx: typer.Context,
    dataset: Annotated[
        str, typer.Option("--dataset", help="nezha, nezha-tt, changerca, rcd-sockshop, seeded.")
    ],
    path: Annotated[
        Path | None, typer.Option("--path", help="The dataset's folder (seeded: optional).")
    ] = None,
    adapter: Annotated[
        str | None,
        typer.Option("--adapter", help="module:function loading a folder into cases."),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N cases.")] = None,
    distractor: Annotated[
        bool,
        typer.Option(help="Also replay each case with an unrelated recent deploy (second arm)."),
    ] = True,
    feedback: Annotated[
        bool,
        typer.Option(
            help="Confirm each clean incident with its label once scored, as a user "
            "would; later incidents state their confidence calibrated by it."
        ),
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the scorecard as JSON.")] = False,
    only: Annotated[
        str | None,
        typer.Option(help="Keep only these sources of each case (as `eval --only`)."),
    ] = None,
    topology: Annotated[
        bool,
        typer.Option(help="--no-topology: no stated call graph or manifests (as `eval`)."),
    ] = True,
) -> None:
    """End to end through the API: each case's world through the lanes (and a Git monorepo
    of its releases), `serve`'s app with its workers, the alert POSTed as Alertmanager's
    webhook, the incident it ends as scored: plan AC@1/3, conclusion accuracy, coverage,
    Validated precision, calibration, time and tool calls per incident, and how often an
    unrelated recent deploy is concluded (the distractor arm). Without OLLAMA_HOST the
    agent runs its deterministic tool floor, and the scorecard says so."""
    from stackgraph.eval.e2e import markdown, run_e2e, table
    from stackgraph.eval.narrowed import sources_from

    keep = sources_from(only)
    settings = state_of(ctx).settings()
    with replaying(settings, "e2e", dataset) as (store, progress):
        card = run_e2e(dataset, path, store, settings=settings, adapter=adapter, limit=limit,
                       distractor=distractor, feedback=feedback, progress=progress,
                       only=keep, topology=topology)  # fmt: skip
    if as_json:
        sys.stdout.write(json.dumps(card, indent=2) + "\n")
        return
    wide = out if out.is_terminal else Console(width=200)  # into a pipe: no wrapping
    wide.print(table(card))
    sys.stdout.write("\n" + markdown(card) + "".join(f"\nnote: {n}" for n in card["notes"]) + "\n")


@eval_app.command("evolve")
def eval_evolve(
    ctx: typer.Context,
    dataset: Annotated[str, typer.Option("--dataset", help="A dataset, as for `eval`.")],
    path: Annotated[Path | None, typer.Option("--path", help="The dataset's folder.")] = None,
    adapter: Annotated[str | None, typer.Option("--adapter", help="module:function.")] = None,
    every: Annotated[int, typer.Option(help="Evolve after every N incidents.")] = 10,
    limit: Annotated[int | None, typer.Option(help="Only the first N cases.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Learning from feedback in time order: each incident diagnosed before its own
    feedback, with the knowledge evolved so far and with evolution off; every N incidents
    the labelled trajectories are mined and each proposal judged by the dual gate."""
    from stackgraph.eval.evolve_experiment import experiment

    settings = state_of(ctx).settings()
    with replaying(settings, "evolve", dataset) as (store, progress):
        report = experiment(dataset, path, store, settings=settings, adapter=adapter,
                            every=max(1, every), limit=limit, progress=progress)  # fmt: skip
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2, default=str) + "\n")
        return
    for line in evolve_lines(report):
        out.print(line, markup=False)


def evolve_lines(report: dict[str, Any]) -> list[str]:
    """`eval evolve`'s report for people: both arms, what was admitted, and each kind of
    rejection with an example and what its gate measured before and after it."""
    lines = [f"{report['dataset']}: {report['incidents']} incidents, evolved every "
             f"{report['every']}; {report['proposals']} proposal(s), {report['admitted']} "
             f"admitted, {report['rejected_inner']} rejected by the inner gate, "
             f"{report['rejected_outer']} by the outer"]  # fmt: skip
    for arm, m in (("evolution off", report["off"]), ("evolution on", report["on"])):
        lines.append(f"  {arm}: AC@1 {100 * m['ac1']:.1f} (plan {100 * m['plan_ac1']:.1f}), "
                     f"Validated precision {m['validated_precision']} ({m['validated']}), "
                     f"{m['tool_calls_per_incident']} tool calls, "
                     f"{m['seconds_per_incident']} s")  # fmt: skip
    lines += [f"  admitted after incident {item['after_incident']}: {item['proposal']}"
              for item in report["admitted_items"]]  # fmt: skip
    for gate, groups in report["rejected"].items():
        for g in groups:
            e = g["example"]
            moved = ", ".join(f"{k} {e['before'][k]:g} → {e['after'].get(k, 0.0):g}"
                              for k in e.get("before", {}))  # fmt: skip
            lines.append(
                f"  rejected by the {gate} gate, {g['count']} {g['kind']} "
                f"proposal(s): {g['reason']}; e.g. {e['what']!r}"
                + (f" ({moved} over {e['cases']} incident(s))" if moved else "")
            )
    return lines
