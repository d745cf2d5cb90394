"""PromQL templates: constant files, slots filled only from validated names."""

from __future__ import annotations

import pytest

import stackgraph.ingest.lanes.telemetry as telemetry
from stackgraph.errors import ConfigError, InputError
from stackgraph.ingest.lanes.telemetry import PromQLNames, _edges, _prometheus, _promql, _spans


def test_every_template_renders_without_leftover_slots() -> None:
    names = _promql.names()
    assert {"edge_requests", "edge_failed", "edge_latency_p95", "service_error_ratio"} <= set(names)
    for name in names:
        text = _promql.render(_promql.load(name), PromQLNames(), "checkout")
        assert "<<" not in text and not text.lstrip().startswith("#"), name


def test_metric_names_come_from_settings() -> None:
    names = PromQLNames(requests="traces_service_graph_request", window="2m")
    text = _promql.render(_promql.load("edge_requests"), names)
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
        _promql.render(_promql.load("service_request_rate"), PromQLNames(), service)


def test_unknown_slots_and_templates_are_errors() -> None:
    with pytest.raises(ConfigError, match="<<nope>>"):
        _promql.render("sum(<<nope>>)", PromQLNames())
    with pytest.raises(ValueError, match="no PromQL template"):
        _promql.load("missing")
    with pytest.raises(ValueError, match="invalid"):
        _promql.load("../x")


def test_the_package_exports_its_modules_public_names() -> None:
    exported = set(telemetry.__all__)
    for module in (_edges, _prometheus, _promql, _spans):
        assert set(module.__all__) - {"label_value", "load", "names", "render"} <= exported
    assert all(hasattr(telemetry, n) for n in exported)
