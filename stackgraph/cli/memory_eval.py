"""`stackgraph eval memory`: retrieval quality of the incident memory."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from .app import open_store, out, state_of
from .eval import eval_app


@eval_app.command("memory")
def eval_memory(
    ctx: typer.Context,
    dataset: Annotated[
        Path | None, typer.Option(help="Labelled incidents YAML (default: the shipped set).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Memory retrieval quality: recall@5 and MRR of hybrid vs vector / bm25 / graph.
    Runs in a scratch graph `<graph>_memory_eval`, deleted afterwards."""
    from stackgraph.eval.memory import run_memory_eval
    from stackgraph.ingest import GraphIngestor
    from stackgraph.memory import default_embedder, open_memory

    settings = state_of(ctx).settings()
    scratch = settings.model_copy(update={"graph": f"{settings.graph}_memory_eval"})

    def drop(store: Any) -> None:
        with GraphIngestor(store, who="eval-memory") as writer:
            writer.drop_graph()

    with open_store(scratch) as store:
        drop(store)
        # the configured embedder; vectors in the scratch graph, never the real collection
        embedder = default_embedder(settings.ollama_host, settings.embed_model)
        try:
            result = run_memory_eval(store, memory=open_memory(store, embedder), path=dataset)
        finally:
            drop(store)
    if as_json:
        sys.stdout.write(json.dumps(result) + "\n")
        return
    out.print(f"{result['incidents']} incidents in {result['groups']} groups")
    for name, m in result["methods"].items():
        out.print(f"{name:7s} recall@5 {m['recall5']:.3f}  MRR {m['mrr']:.3f}")
