"""The app factory and its lifespan. Nothing is built at import: settings, the store and
the incident service are made in `create_app` / the lifespan, so tests can inject them."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from stackgraph.config import Settings
from stackgraph.memory import Memory
from stackgraph.memory.knowledge import LiveKnowledge, outcome_history
from stackgraph.rca import Planner
from stackgraph.rca.agent import Agent, AgentConfig, ToolContext
from stackgraph.rca.agent.tools_prometheus import context_fields
from stackgraph.rca.model import Alert, LogSource, Plan, SpanSource
from stackgraph.rca.outcome import OutcomeWriter
from stackgraph.rca.sources import logs_from_settings, spans_from_settings
from stackgraph.store import GraphStore

from .deps import load_token
from .escalation import Escalation
from .knowledge_hooks import TrajectoryRecorder
from .memory_hooks import EpisodeRecorder, open_api_memory
from .metrics import ApiMetrics
from .routers import alerts, docs, health, incidents, investigate, memory, tools
from .routers.docs import OPENAPI_URL
from .service import IncidentService, PlanFn

log = logging.getLogger(__name__)


def agent_from(settings: Settings) -> Agent:
    return Agent(AgentConfig(
        ollama_host=settings.ollama_host,
        model=settings.agent_model,
        max_steps=settings.agent_max_steps,
        wall_clock_s=settings.agent_wall_clock_s,
    ))  # fmt: skip


def _kube_client(settings: Settings) -> Any:
    if not settings.agent_kube:
        return None
    from kubernetes import client, config

    try:
        config.load_incluster_config()
    except config.ConfigException:
        try:
            config.load_kube_config()
        except (config.ConfigException, OSError) as exc:
            log.warning("Kubernetes tools disabled: %s", exc)
            return None
    return client.ApiClient()


def context_from(
    settings: Settings,
    store: GraphStore,
    memory: Memory | None = None,
    logs: LogSource | None = None,
    spans: SpanSource | None = None,
) -> Callable[[Alert, Plan], ToolContext]:
    """What the agent's tools may reach, from settings. `logs` is the read path's log
    source (the planner's, so log files are read once); `loki_query` reads it when no
    `agent_loki_url` is set."""
    kube = _kube_client(settings)
    knowledge = LiveKnowledge()
    prometheus = context_fields(settings)

    def make(alert: Alert, plan: Plan) -> ToolContext:
        return ToolContext(
            store=store, alert=alert, plan=plan, at=alert.starts_at,
            prometheus_url=settings.agent_prometheus_url, loki_url=settings.agent_loki_url,
            logs=logs, spans=spans, repos=dict(settings.agent_repos), kube=kube,
            kube_namespace=settings.agent_kube_namespace, memory=memory, **prometheus,
            knowledge=knowledge(store), history=outcome_history(store),
        )  # fmt: skip

    return make


def plan_from(settings: Settings, planner: Planner | None = None) -> PlanFn:
    """The plan of every incident: `planner` (default `Planner.from_settings`), its alert
    window ending when the worker plans, or at the alert's startsAt with
    `api_investigate_at: fired`."""
    planner = planner or Planner.from_settings(settings)
    if settings.api_investigate_at == "received":
        return planner

    def at_firing(store: GraphStore, alert: Alert) -> Plan:
        return planner(store, alert, at=alert.starts_at)

    return at_firing


def open_reader(settings: Settings, primary: GraphStore) -> GraphStore:
    """The read path's store: a FalkorDB replica when `falkordb_read_url` is set (plans,
    agent tools and graph queries read there, so the primary keeps its time for the
    writer, the lease, incidents and jobs), else the primary itself."""
    if not settings.falkordb_read_url:
        return primary
    replica = settings.model_copy(update={"falkordb_url": settings.falkordb_read_url})
    return GraphStore.open(replica, primary.graph_name)


def create_app(
    settings: Settings,
    *,
    store: GraphStore | None = None,
    plan_fn: PlanFn | None = None,
    agent: Agent | None = None,
    context_fn: Callable[[Alert, Plan], ToolContext] | None = None,
    token: str | None = None,
    memory_fn: Callable[[GraphStore], Memory | None] | None = None,
) -> FastAPI:
    """Build the API. `store`, `plan_fn`, `agent`, `context_fn` and `memory_fn` (the
    incident memory, or None for none) may be injected; by default the store and the
    memory are opened from settings in the lifespan, once, and the store closed after, and
    plans come from `Planner.from_settings` (live metrics when Prometheus is set)."""
    api_token = token or load_token(settings)
    metrics = ApiMetrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        own = store is None
        st = GraphStore.open(settings) if store is None else store
        try:
            reader = open_reader(settings, st)
        except Exception:
            if own:
                st.close()
            raise
        mem: Memory | None = None
        if memory_fn is not None:
            mem = memory_fn(st)
        elif settings.api_memory:
            mem = open_api_memory(settings, st, metrics)
        writer = OutcomeWriter(st, batch_size=settings.batch_size,
                               lease_ttl_s=settings.lease_ttl_s,
                               lease_wait_s=settings.api_lease_wait_s)  # fmt: skip
        planner = Planner.from_settings(settings) if plan_fn is None else None
        logs = planner.logs if planner is not None else logs_from_settings(settings)
        spans = planner.spans if planner is not None else spans_from_settings(settings)
        checker = agent or agent_from(settings)
        contexts = context_fn or context_from(settings, reader, mem, logs, spans)
        escalation = (Escalation(planner, checker, contexts, settings.investigate_attempts)
                      if planner is not None else None)  # fmt: skip
        service = IncidentService(
            st,
            plan_fn=plan_fn or plan_from(settings, planner),
            agent=checker,
            reader=reader,
            context_fn=contexts,
            escalation=escalation,
            writer=writer,
            queue_size=settings.api_queue_size,
            workers=settings.api_workers,
            shadow=settings.shadow_mode,
            metrics=metrics,
            correlation_window_s=settings.api_correlation_window_s,
            claim_idle_s=settings.api_claim_idle_s,
            retention_s=settings.api_incident_retention_s,
        )  # fmt: skip
        traced = TrajectoryRecorder(writer, metrics)
        service.on_concluded.append(traced)
        service.on_feedback.append(traced)
        if mem is not None:
            recorder = EpisodeRecorder(mem, writer, metrics)
            service.on_concluded.append(recorder.concluded)
            service.on_feedback.append(recorder.feedback)
        app.state.store, app.state.service, app.state.memory = st, service, mem
        app.state.reader = reader
        service.start()
        try:
            yield
        finally:
            service.stop()
            if reader is not st:
                reader.close()
            if own:
                st.close()

    public = settings.api_docs_public
    app = FastAPI(
        title="StackGraph",
        version="0.1.0",
        summary="Alert in, verified root cause out: plan, evidence, report, write-back.",
        lifespan=lifespan,
        max_body_size=settings.api_max_body_bytes,  # 413, for chunked bodies too
        openapi_url=OPENAPI_URL if public else None,
        docs_url="/docs" if public else None,
        redoc_url="/redoc" if public else None,
    )
    app.state.token = api_token
    app.state.metrics = metrics
    app.state.settings = settings
    app.state.memory = None
    app.add_exception_handler(RequestValidationError, _validation_error)
    for router in (alerts.router, incidents.router, investigate.router, tools.router,
                   memory.router, health.router):  # fmt: skip
        app.include_router(router)
    if not public:
        app.include_router(docs.router)
    from stackgraph.web.routes import router as ui_router  # the UI reuses these routers

    app.include_router(ui_router)
    return app


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's 422, without echoing the input: it may be megabytes, or text that cannot
    be encoded (a lone surrogate), and the message already names the field and the fault."""
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    detail = [{"type": e["type"], "loc": list(e["loc"]), "msg": e["msg"]} for e in errors]
    return JSONResponse({"detail": detail}, status_code=422)
