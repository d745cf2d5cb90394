"""Every PromQL query of the lane is a constant `.promql` file in `promql/`, loaded by name.

Templates carry `<<slot>>` markers for what differs between installations: metric names
(Tempo, Alloy and the OTel connector name them differently), the rate window, the subject
label. Slots are filled only from validated settings; the one value that comes from the
caller, a service name, is checked against a conservative pattern and then written as a
quoted PromQL string literal, so it can never become query syntax.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from stackgraph.config import Settings
from stackgraph.errors import ConfigError, InputError

__all__ = ["PromQLNames", "label_value", "load", "names", "render"]

_SLOT = re.compile(r"<<([a-z_]+)>>")
_TEMPLATE = re.compile(r"^[a-z][a-z0-9_]*$")
_METRIC = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_DURATION = re.compile(r"^([0-9]+(ms|s|m|h|d|w|y))+$")
_SERVICE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,252}$")


@dataclass(frozen=True)
class PromQLNames:
    """The installation-specific names templates refer to, validated once."""

    requests: str = "traces_service_graph_request_total"
    failed: str = "traces_service_graph_request_failed_total"
    server_seconds: str = "traces_service_graph_request_server_seconds"
    subject_label: str = "messaging_destination_name"
    window: str = "5m"

    def __post_init__(self) -> None:
        for field, pattern in (
            ("requests", _METRIC),
            ("failed", _METRIC),
            ("server_seconds", _METRIC),
            ("subject_label", _LABEL),
            ("window", _DURATION),
        ):
            value = getattr(self, field)
            if not pattern.match(value):
                raise ConfigError(f"telemetry {field} {value!r} is not a valid PromQL name")

    @classmethod
    def from_settings(cls, settings: Settings) -> PromQLNames:
        return cls(
            requests=settings.telemetry_metric_requests,
            failed=settings.telemetry_metric_failed,
            server_seconds=settings.telemetry_metric_server_seconds,
            subject_label=settings.telemetry_subject_label,
            window=settings.telemetry_window,
        )


@cache
def load(name: str) -> str:
    """The text of template `name` (without `.promql`), leading `#` comment lines dropped."""
    if not _TEMPLATE.match(name):
        raise ValueError(f"invalid PromQL template name {name!r}")
    path = resources.files(__package__).joinpath("promql", f"{name}.promql")
    if not path.is_file():
        raise ValueError(f"no PromQL template named {name!r}")
    lines = path.read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith("#")).strip()


def names() -> list[str]:
    root = resources.files(__package__).joinpath("promql")
    return sorted(p.name[: -len(".promql")] for p in root.iterdir() if p.name.endswith(".promql"))


def label_value(value: str) -> str:
    """A service name as a quoted PromQL string; anything unusual is refused, not escaped."""
    if not _SERVICE.match(value):
        raise InputError(f"{value!r} is not a service name that can be queried in Prometheus")
    return json.dumps(value)


def render(text: str, names: PromQLNames, service: str | None = None) -> str:
    """Fill `text`'s slots; `text` is a template (from `load` or the operator's config)."""
    slots = {
        "requests": names.requests,
        "failed": names.failed,
        "server_seconds": names.server_seconds,
        "subject_label": names.subject_label,
        "window": names.window,
    }
    if service is not None:
        slots["service"] = label_value(service)

    def fill(match: re.Match[str]) -> str:
        slot = match.group(1)
        if slot not in slots:
            raise ConfigError(f"PromQL template slot <<{slot}>> is unknown or not filled here")
        return slots[slot]

    return _SLOT.sub(fill, text)
