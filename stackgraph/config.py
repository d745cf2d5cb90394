"""Settings: defaults, then a YAML config file, then `STACKGRAPH_*` env vars, then flags."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import AliasChoices, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from .errors import ConfigError
from .repo_config import RepoSpec


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "stackgraph"


class _YamlSource(PydanticBaseSettingsSource):
    """Values from the `--config` file; below env vars, above defaults."""

    def __init__(self, settings_cls: type[BaseSettings], data: dict[str, Any]) -> None:
        super().__init__(settings_cls)
        self._data = data

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return self._data.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self._data)


_METRIC = r"^[a-zA-Z_:][a-zA-Z0-9_:]*$"
_LABEL = r"^[a-zA-Z_][a-zA-Z0-9_]*$"


class Settings(BaseSettings):
    """Everything configurable. Env vars are `STACKGRAPH_<FIELD>`; well-known ones too."""

    model_config = SettingsConfigDict(
        env_prefix="STACKGRAPH_", extra="ignore", populate_by_name=True
    )

    data_dir: Path = Field(default_factory=default_data_dir)
    graph: str = Field(default="stackgraph", pattern=r"^[A-Za-z0-9_.:-]{1,128}$")
    falkordb_url: str | None = Field(
        default=None, validation_alias=AliasChoices("STACKGRAPH_FALKORDB_URL", "FALKORDB_URL")
    )
    falkordb_read_url: str | None = None
    """A FalkorDB replica (`REPLICAOF` the primary) for the API's read path: plans, agent
    tools, graph queries. Writes, the lease, incidents and jobs stay on the primary."""
    embedded_port: int | None = Field(default=None, ge=1, le=65535)
    """TCP port for the embedded server; default: a unix socket in the data dir."""
    batch_size: int = Field(default=5000, ge=1, le=100_000)
    lease_ttl_s: float = Field(default=60.0, gt=1.0)
    query_timeout_ms: int = Field(default=30_000, ge=0)
    catalog: Path | None = None
    """Catalog YAML for the `catalog` lane."""
    # -- change lane (ingest/lanes/change.py) --
    change_service_map: dict[str, str] = Field(default_factory=dict)
    """Path prefix in a repo -> service it belongs to, beside the inferred layout."""
    change_max_commits: int = Field(default=10_000, ge=1)
    """Most commits read from one repository in one run (the first run of a big repo)."""

    # -- telemetry lane: Tempo service-graph metrics in Prometheus, or span files ---------
    prometheus_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("STACKGRAPH_PROMETHEUS_URL", "PROMETHEUS_URL"),
    )
    telemetry_window: str = Field(default="5m", pattern=r"^([0-9]+(ms|s|m|h|d|w|y))+$")
    """PromQL range over which trace_count / error_rate / p95 are computed."""
    telemetry_fresh_s: float = Field(default=900.0, gt=0)
    """Tempo edges not seen for this long are flipped to Stale after an ingest."""
    telemetry_at: float | None = None
    """Evaluate at this epoch second instead of now (backfills, replays)."""
    telemetry_timeout_s: float = Field(default=10.0, gt=0)
    telemetry_step_s: float = Field(default=15.0, gt=0)
    """Resolution of range queries for the read path's metric probes."""
    telemetry_spans: Path | None = None
    """Span file or folder (OTLP JSON, Jaeger JSON, CSV): the offline source."""
    telemetry_metric_requests: str = Field(
        default="traces_service_graph_request_total", pattern=_METRIC
    )
    telemetry_metric_failed: str = Field(
        default="traces_service_graph_request_failed_total", pattern=_METRIC
    )
    telemetry_metric_server_seconds: str = Field(
        default="traces_service_graph_request_server_seconds", pattern=_METRIC
    )
    """Histogram family (without `_bucket`) of server-side request latency."""
    telemetry_metric_client_seconds: str = Field(
        default="traces_service_graph_request_client_seconds", pattern=_METRIC
    )
    """Histogram family of client-side latency: what a caller waits, network included."""
    telemetry_latency_unit_s: float = Field(default=1.0, gt=0)
    """Unit of that histogram in seconds (0.001 for a millisecond histogram)."""
    telemetry_subject_label: str = Field(default="messaging_destination_name", pattern=_LABEL)
    """Label carrying the messaging subject (a Tempo `dimensions` entry), if configured."""
    telemetry_extra_promql: dict[str, str] = Field(default_factory=dict)
    """Metric kinds for the read path's probes beyond (or replacing) the built-in ones, e.g.
    {"memory/heap": "sum(jvm_memory_used_bytes{app=<<service>>})"}; `<<service>>` becomes
    a quoted label value, `<<pods>>` the quoted pod pattern, `<<window>>` metrics_window.
    An empty template switches a built-in kind off."""

    # -- read path: live metrics (rca/sources/), used whenever prometheus_url is set --------
    metrics_window: str = Field(default="1m", pattern=r"^([0-9]+(ms|s|m|h|d|w|y))+$")
    """Rate window of the probes: four scrape intervals of 15 s, so a minute-long change
    shows within a minute (the lane's telemetry_window summarises; probes must follow)."""
    metrics_pod_pattern: str = "<<service>>-([a-z0-9]{6,10}-)?[a-z0-9]{5}|<<service>>-[0-9]+"
    """RE2 pattern of a service's pod names (cAdvisor / kube-state-metrics series);
    `<<service>>` is the regex-escaped service name."""
    loki_url: str | None = Field(
        default=None, validation_alias=AliasChoices("STACKGRAPH_LOKI_URL", "LOKI_URL")
    )
    """Loki the read path reads candidates' log lines from (the `logs` scorer)."""
    logs_selector: str = "{service_name=<<service>>}"
    """LogQL stream selector of a service's lines; `<<service>>` becomes its quoted name."""
    logs_path: Path | None = None
    """A folder of log files (logcli JSON Lines, or CSV) instead of Loki: offline, replays."""
    traces_path: Path | None = None
    """Span files (any format the telemetry lane reads) the read path reads spans from:
    trace structure and failed calls (`traces` scorers)."""
    investigate_hops: int = Field(default=4, ge=1, le=4)
    """Neighbourhood depth of every investigation (API, MCP, CLI, replay)."""
    investigate_program: str = "default"
    """The program every investigation's plan comes from: a shipped playbook's name
    (`stackgraph program list`), a program file (YAML/JSON), or `auto` (stage 1: the
    playbook the alert's features pick)."""
    investigate_attempts: int = Field(default=1, ge=1, le=3)
    """Plans per incident in `serve`: with 2 or 3, when the agent's tools refute every lead
    of a plan, the next comes from a new program (stage 2; with a model, stage 3 is the
    replay's). 1 by default: on the seeded set end to end it doubled how often the floor
    concluded but halved how often a conclusion was right (EVAL.md)."""

    # -- deploy: the in-process lane scheduler (`stackgraph schedule run`, `serve --schedule`) --
    schedule_static_lanes: str | None = None
    """Lanes of the slow job; default: catalog (if `catalog` is set), infra, code (if repos)."""
    schedule_static_interval_s: float = Field(default=3600.0, gt=0)
    schedule_change_lanes: str | None = None
    """Default: `change`, when that lane is installed."""
    schedule_change_interval_s: float = Field(default=300.0, gt=0)
    schedule_telemetry_lanes: str | None = None
    """Default: `telemetry`, when that lane is installed."""
    schedule_telemetry_interval_s: float = Field(default=120.0, gt=0)
    schedule_evolve_interval_s: float | None = Field(default=None, gt=0)
    """`stackgraph evolve` as a scheduled job (e.g. 86400: daily); None: not scheduled."""
    schedule_manifests: Path | None = None
    """Manifests directory handed to the scheduled lanes (offline infra); default: none."""
    schedule_repos: list[Path] = Field(default_factory=list)
    """Local Git checkouts handed to the scheduled code and change lanes."""

    # -- API, agent and write-back (stackgraph serve / mcp) --------------------------------
    api_token: str | None = Field(default=None, repr=False)
    """Bearer token for the HTTP API (env STACKGRAPH_API_TOKEN)."""
    api_token_file: Path | None = None
    """A mounted file holding the token (used when api_token is unset)."""
    api_max_body_bytes: int = Field(default=1_048_576, ge=1024)
    """Request body limit: 413 beyond, whether the length is declared or the body chunked."""
    api_docs_public: bool = False
    """Serve /openapi.json, /docs and /redoc without the token (they need it by default)."""
    api_queue_size: int = Field(default=64, ge=1)
    """Bound of the job stream's backlog; a webhook that would start an investigation
    beyond it is answered 503 (a payload is taken whole while the backlog is below it)."""
    api_workers: int = Field(default=2, ge=1, le=32)
    """Investigation workers of each `serve` process (all replicas share one stream)."""
    api_lease_wait_s: float = Field(default=30.0, ge=0)
    api_correlation_window_s: float = Field(default=300.0, ge=0)
    """Firing alerts arriving within this long of an open incident with the same symptom,
    top candidate or path join it (api/correlation.py); 0: one incident per alert."""
    api_claim_idle_s: float = Field(default=60.0, gt=0)
    """A job whose worker stopped renewing it this long (killed, cut off) is claimed by
    another worker; workers renew every third of it."""
    api_incident_retention_s: float = Field(default=7 * 86400.0, gt=0)
    """Finished incident records older than this leave Redis (the graph keeps them)."""
    api_investigate_at: Literal["received", "fired"] = "received"
    """Where an alert's plan ends its alert window: `received`, when a worker plans it (what
    happened since the alert fired counts too); `fired`, at the alert's startsAt, the moment
    the agent's tools already read up to. `fired` investigates an alert that arrives long
    after it fired (re-sent from Alertmanager's state, a backlog drained after an outage,
    past incidents replayed through the webhook) as of when it fired, not over everything
    since. An alert without startsAt is planned when received either way."""
    shadow_mode: bool = False
    """Record everything, but mark outcomes (ROOT_CAUSED_BY, Incident) as shadow."""
    agent_model: str = "qwen3:8b"
    agent_max_steps: int = Field(default=12, ge=1, le=100)
    agent_wall_clock_s: float = Field(default=300.0, gt=0)
    agent_prometheus_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("STACKGRAPH_AGENT_PROMETHEUS_URL", "PROMETHEUS_URL"),
    )
    agent_loki_url: str | None = Field(
        default=None, validation_alias=AliasChoices("STACKGRAPH_AGENT_LOKI_URL", "LOKI_URL")
    )
    agent_repos: dict[str, Path] = Field(default_factory=dict)
    """service -> local Git checkout for git_log / git_show."""
    agent_kube_namespace: str = "default"
    agent_kube: bool = False
    """Offer the Kubernetes tools (in-cluster config, else kubeconfig)."""

    # --- code lane and code index (ingest/lanes/code, memory/code_index.py) ---
    repos: list[RepoSpec] = Field(default_factory=list)
    """Repos for the `code` lane: `{url | path, branch, services: [...] | {prefix: svc}}`."""
    git_token: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("git_token", "STACKGRAPH_GIT_TOKEN", "GIT_TOKEN"),
    )
    git_token_file: Path | None = None
    """A mounted secret holding the Git token (used when `git_token` is unset)."""
    qdrant_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("qdrant_url", "STACKGRAPH_QDRANT_URL", "QDRANT_URL"),
    )
    qdrant_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "qdrant_api_key", "STACKGRAPH_QDRANT_API_KEY", "QDRANT_API_KEY"
        ),
    )
    ollama_host: str | None = Field(
        default=None,
        validation_alias=AliasChoices("ollama_host", "STACKGRAPH_OLLAMA_HOST", "OLLAMA_HOST"),
    )
    embed_model: str = "bge-m3"
    """Ollama embedding model (only with `ollama_host`)."""
    code_index: bool = True
    """Embed code chunks into the code index during the `code` lane."""
    code_collection: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]{1,128}$")
    """Qdrant collection for code chunks; default `<graph>_code`."""

    # -- incident memory (memory/): vectors in Qdrant when `qdrant_url` is set, else in
    # FalkorDB's HNSW index; embeddings from `ollama_host` (embed_model) or offline MiniLM --
    memory_collection: str = Field(default="stackgraph_memory", pattern=r"^[A-Za-z0-9_-]{1,64}$")
    # -- memory wiring (stackgraph/api/memory_hooks.py) --
    api_memory: bool = True
    """`serve` records episodes, supersedes them on feedback and answers memory search."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _YamlSource(settings_cls, _CONFIG_DATA))


_CONFIG_DATA: dict[str, Any] = {}


def load_settings(config_file: Path | None = None, **overrides: Any) -> Settings:
    """Build settings; `overrides` (CLI flags) win, `None` values are ignored."""
    data: dict[str, Any] = {}
    if config_file is not None:
        try:
            loaded = yaml.safe_load(config_file.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read config file {config_file}: {exc.strerror}") from exc
        except yaml.YAMLError as exc:
            raise ConfigError(f"config file {config_file} is not valid YAML: {exc}") from exc
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"config file {config_file} must hold a mapping at the top level")
        data = {str(k).replace("-", "_"): v for k, v in loaded.items()}
    _CONFIG_DATA.clear()
    _CONFIG_DATA.update(data)
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        source = f" (from {config_file})" if config_file else ""
        raise ConfigError(f"setting {where}{source}: {first['msg']}") from exc
    finally:
        _CONFIG_DATA.clear()
