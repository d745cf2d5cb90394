"""PromQL as constant `.promql` files, loaded by name, with slots filled only from
validated values.

Templates carry `<<slot>>` markers for what differs between installations: metric names
(Tempo, Alloy and the OTel connector name them differently), the rate window, the subject
label. Slots are filled only from validated settings. The values that come from a caller
(a service name, a caller's name) are checked against a conservative pattern and then
written as quoted PromQL string literals, so they can never become query syntax; a pod
pattern is built from the regex-escaped service name.

    lane = Templates("stackgraph.ingest.lanes.telemetry")      # its promql/ folder
    text = render(lane.load("edge_requests"), PromQLNames())
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from stackgraph.config import Settings
from stackgraph.errors import ConfigError, InputError

__all__ = ["PromQLNames", "Templates", "duration_s", "label_value", "render"]

_SLOT = re.compile(r"<<([a-z_]+)>>")
_TEMPLATE = re.compile(r"^[a-z][a-z0-9_]*$")
_METRIC = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_DURATION = re.compile(r"^([0-9]+(ms|s|m|h|d|w|y))+$")
_SERVICE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,252}$")
SERVICE_SLOT = "<<service>>"


@dataclass(frozen=True)
class PromQLNames:
    """The installation-specific names templates refer to, validated once."""

    requests: str = "traces_service_graph_request_total"
    failed: str = "traces_service_graph_request_failed_total"
    server_seconds: str = "traces_service_graph_request_server_seconds"
    client_seconds: str = "traces_service_graph_request_client_seconds"
    subject_label: str = "messaging_destination_name"
    window: str = "5m"
    pods: str = "<<service>>-([a-z0-9]{6,10}-)?[a-z0-9]{5}|<<service>>-[0-9]+"
    """RE2 pattern of a service's pod names; `<<service>>` is its regex-escaped name. The
    default: Deployment pods (`<name>-<template hash>-<5 chars>`), DaemonSet pods
    (`<name>-<5 chars>`) and StatefulSet pods (`<name>-<ordinal>`)."""

    def __post_init__(self) -> None:
        for field, pattern in (
            ("requests", _METRIC),
            ("failed", _METRIC),
            ("server_seconds", _METRIC),
            ("client_seconds", _METRIC),
            ("subject_label", _LABEL),
            ("window", _DURATION),
        ):
            value = getattr(self, field)
            if not pattern.match(value):
                raise ConfigError(f"telemetry {field} {value!r} is not a valid PromQL name")
        if SERVICE_SLOT not in self.pods:
            raise ConfigError(f"telemetry pods pattern {self.pods!r} lacks {SERVICE_SLOT}")
        try:
            re.compile(self.pods.replace(SERVICE_SLOT, "x"))
        except re.error as exc:
            raise ConfigError(f"telemetry pods pattern {self.pods!r}: {exc}") from exc

    @classmethod
    def from_settings(cls, settings: Settings, *, window: str | None = None) -> PromQLNames:
        """The names of the settings; `window` replaces the lane's rate window (the read
        path's probes use their own, shorter one)."""
        return cls(
            requests=settings.telemetry_metric_requests,
            failed=settings.telemetry_metric_failed,
            server_seconds=settings.telemetry_metric_server_seconds,
            client_seconds=settings.telemetry_metric_client_seconds,
            subject_label=settings.telemetry_subject_label,
            window=window or settings.telemetry_window,
            pods=settings.metrics_pod_pattern,
        )


class Templates:
    """The constant `.promql` files in the `promql/` folder of one package."""

    def __init__(self, package: str) -> None:
        self.package = package

    def load(self, name: str) -> str:
        """The text of template `name` (without `.promql`), leading `#` comment lines dropped."""
        return _load(self.package, name)

    def names(self) -> list[str]:
        root = resources.files(self.package).joinpath("promql")
        return sorted(
            p.name[: -len(".promql")] for p in root.iterdir() if p.name.endswith(".promql")
        )


_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0,
           "y": 31536000.0}  # fmt: skip


def duration_s(text: str) -> float:
    """Seconds in a PromQL duration (`1m`, `1h30m`); a y is 365 days, as Prometheus has it."""
    if not _DURATION.match(text):
        raise ConfigError(f"{text!r} is not a PromQL duration")
    return sum(float(n) * _UNIT_S[u] for n, u in re.findall(r"([0-9]+)(ms|s|m|h|d|w|y)", text))


@cache
def _load(package: str, name: str) -> str:
    if not _TEMPLATE.match(name):
        raise ValueError(f"invalid PromQL template name {name!r}")
    path = resources.files(package).joinpath("promql", f"{name}.promql")
    if not path.is_file():
        raise ValueError(f"no PromQL template named {name!r}")
    lines = path.read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith("#")).strip()


def _checked(value: str) -> str:
    if not _SERVICE.match(value):
        raise InputError(f"{value!r} is not a service name that can be queried in Prometheus")
    return value


def label_value(value: str) -> str:
    """A service name as a quoted PromQL string; anything unusual is refused, not escaped."""
    return json.dumps(_checked(value))


def render(
    text: str, names: PromQLNames, service: str | None = None, client: str | None = None
) -> str:
    """Fill `text`'s slots; `text` is a template (a file's, or the operator's config).

    `<<service>>` and `<<client>>` become quoted names, `<<pods>>` the quoted pod pattern
    of the service."""
    slots = {
        "requests": names.requests,
        "failed": names.failed,
        "server_seconds": names.server_seconds,
        "client_seconds": names.client_seconds,
        "subject_label": names.subject_label,
        "window": names.window,
    }
    if service is not None:
        slots["service"] = label_value(service)
        escaped = re.escape(_checked(service))
        slots["pods"] = json.dumps(names.pods.replace(SERVICE_SLOT, escaped))
    if client is not None:
        slots["client"] = label_value(client)

    def fill(match: re.Match[str]) -> str:
        slot = match.group(1)
        if slot not in slots:
            raise ConfigError(f"PromQL template slot <<{slot}>> is unknown or not filled here")
        return slots[slot]

    return _SLOT.sub(fill, text)
