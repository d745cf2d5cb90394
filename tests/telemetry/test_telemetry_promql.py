"""PromQL templates: constant files, slots filled only from validated names."""

from __future__ import annotations

import pytest

import stackgraph.ingest.lanes.telemetry as telemetry
from stackgraph.errors import ConfigError, InputError
from stackgraph.ingest.lanes.telemetry import (
    TEMPLATES,
    _edges,
    _pairing,
    _prometheus,
    _span,
    _span_csv,
    _spans,
)
from stackgraph.promql import PromQLNames, Templates, render
from stackgraph.rca.sources import TEMPLATES as READ_TEMPLATES


@pytest.mark.parametrize("templates", [TEMPLATES, READ_TEMPLATES], ids=["lane", "read path"])
def test_every_template_renders_without_leftover_slots(templates: Templates) -> None:
    names = templates.names()
    assert names
    for name in names:
        text = render(templates.load(name), PromQLNames(), "checkout", "frontend")
        assert "<<" not in text and not text.lstrip().startswith("#"), name


def test_metric_names_come_from_settings() -> None:
    names = PromQLNames(requests="traces_service_graph_request", window="2m")
    text = render(TEMPLATES.load("edge_requests"), names)
    assert "increase(traces_service_graph_request[2m])" in text


@pytest.mark.parametrize(
    "field,value",
    [("requests", "x{a=1}"), ("failed", "a b"), ("subject_label", "a.b"), ("window", "5m]")],
)
def test_bad_names_are_refused(field: str, value: str) -> None:
    with pytest.raises(ConfigError, match=field):
        PromQLNames(**{field: value})


@pytest.mark.parametrize("service", ['a"} or vector(1) #', "a\nb", "", "x" * 300, "{a}"])
def test_service_names_never_become_query_text(service: str) -> None:
    with pytest.raises(InputError):
        render(READ_TEMPLATES.load("workload"), PromQLNames(), service)
    with pytest.raises(InputError):
        render(READ_TEMPLATES.load("edge_errors"), PromQLNames(), "checkout", service)


def test_unknown_slots_and_templates_are_errors() -> None:
    with pytest.raises(ConfigError, match="<<nope>>"):
        render("sum(<<nope>>)", PromQLNames())
    with pytest.raises(ConfigError, match="<<client>>"):
        render(READ_TEMPLATES.load("edge_errors"), PromQLNames(), "checkout")
    with pytest.raises(ValueError, match="no PromQL template"):
        TEMPLATES.load("missing")
    with pytest.raises(ValueError, match="invalid"):
        TEMPLATES.load("../x")


def test_the_pod_pattern_escapes_the_service_name() -> None:
    text = render(READ_TEMPLATES.load("cpu"), PromQLNames(), "cart.v2")
    assert r'pod=~"cart\\.v2-([a-z0-9]{6,10}-)?[a-z0-9]{5}|cart\\.v2-[0-9]+"' in text
    with pytest.raises(ConfigError, match="<<service>>"):
        PromQLNames(pods="[a-z]+")
    with pytest.raises(ConfigError, match="pods pattern"):
        PromQLNames(pods="<<service>>-(")


def test_the_package_exports_its_modules_public_names() -> None:
    exported = set(telemetry.__all__)
    for module in (_edges, _pairing, _prometheus, _span, _span_csv, _spans):
        assert set(module.__all__) <= exported
    assert all(hasattr(telemetry, n) for n in exported)
