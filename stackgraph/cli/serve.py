"""`stackgraph serve` (the HTTP API under uvicorn) and `stackgraph mcp` (MCP over stdio)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from .app import app, err, state_of


@app.command()
def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to bind.")] = 8080,
    shadow: Annotated[
        bool, typer.Option("--shadow", help="Record everything, mark outcomes as shadow.")
    ] = False,
    schedule: Annotated[
        bool,
        typer.Option("--schedule", help="Also run the ingest lanes in-process on their intervals."),
    ] = False,
) -> None:
    """Serve the HTTP API: Alertmanager webhook, incidents, tools, health, metrics.

    The bearer token comes from STACKGRAPH_API_TOKEN (or api_token_file).
    """
    import uvicorn

    from stackgraph.api import create_app

    settings = state_of(ctx).settings(shadow_mode=shadow or None)
    api = create_app(settings)
    scheduler = None
    if schedule:
        from stackgraph.scheduler import build_scheduler, default_jobs

        # the scheduler's jobs take the writer lease per run, like the CronJobs would; an
        # evolve job's verdicts are counted on /metrics
        metrics = api.state.metrics

        def counted(outcome: Any) -> None:
            if outcome.evolution is not None:
                metrics.count_evolution(outcome.evolution)

        scheduler = build_scheduler(settings, default_jobs(settings), on_outcome=counted)
        scheduler.start()
    err.print(f"stackgraph API on http://{host}:{port} (graph {settings.graph!r})")
    try:
        uvicorn.run(api, host=host, port=port, log_level="info")
    finally:
        if scheduler is not None:
            scheduler.shutdown(wait=False)


@app.command()
def mcp(ctx: typer.Context) -> None:
    """Serve query_stack_graph, investigate and memory_lookup over MCP (stdio)."""
    import anyio

    from stackgraph.mcp_server import build_server
    from stackgraph.mcp_stdio import serve_stdio

    anyio.run(serve_stdio, build_server(state_of(ctx).settings()))
