"""Settings: defaults, then a YAML config file, then `STACKGRAPH_*` env vars, then flags."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import AliasChoices, Field, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from .errors import ConfigError


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


class Settings(BaseSettings):
    """Everything configurable. Env vars are `STACKGRAPH_<FIELD>`; well-known ones too."""

    model_config = SettingsConfigDict(env_prefix="STACKGRAPH_", extra="ignore")

    data_dir: Path = Field(default_factory=default_data_dir)
    graph: str = Field(default="stackgraph", pattern=r"^[A-Za-z0-9_.:-]{1,128}$")
    falkordb_url: str | None = Field(
        default=None, validation_alias=AliasChoices("STACKGRAPH_FALKORDB_URL", "FALKORDB_URL")
    )
    embedded_port: int | None = Field(default=None, ge=1, le=65535)
    """TCP port for the embedded server; default: a unix socket in the data dir."""
    batch_size: int = Field(default=5000, ge=1, le=100_000)
    lease_ttl_s: float = Field(default=60.0, gt=1.0)
    query_timeout_ms: int = Field(default=30_000, ge=0)
    catalog: Path | None = None
    """Catalog YAML for the `catalog` lane."""

    # -- incident memory (memory/) --
    qdrant_url: str | None = Field(
        default=None, validation_alias=AliasChoices("STACKGRAPH_QDRANT_URL", "QDRANT_URL")
    )
    """Qdrant server for memory vectors; default: FalkorDB's HNSW index in the graph."""
    memory_collection: str = Field(default="stackgraph_memory", pattern=r"^[A-Za-z0-9_-]{1,64}$")
    memory_ollama_host: str | None = Field(
        default=None,
        validation_alias=AliasChoices("STACKGRAPH_MEMORY_OLLAMA_HOST", "OLLAMA_HOST"),
    )
    """Ollama for memory embeddings (bge-m3); default: the offline MiniLM."""

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
