"""The demo's example span and log files: what they say, and that they match their
generators."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

from sgtest import REPO

from stackgraph.ingest.lanes.telemetry import edges_to_records, load_spans, stats_from_spans
from stackgraph.rca.clock import parse_time
from stackgraph.rca.sources import FileLogs

TRACES = REPO / "examples" / "platform" / "traces"
LOGS = REPO / "examples" / "platform" / "logs"
ALERT_AT = 1768471200.0  # 2026-01-15T10:00:00Z
DEPLOYED_AT = 1768470432.0  # payment 1.9.2, examples/platform/manifests/flux-status.yaml


def test_span_files_are_what_their_generator_writes(tmp_path: Path) -> None:
    main = runpy.run_path(str(TRACES / "make_traces.py"))["main"]
    main(tmp_path)
    written = sorted(p.name for p in tmp_path.glob("*.json"))
    assert written == sorted(p.name for p in TRACES.glob("*.json")) and written
    for name in written:
        assert (tmp_path / name).read_bytes() == (TRACES / name).read_bytes(), name


def test_spans_tell_the_payment_story_before_the_alert() -> None:
    stats, last_end = stats_from_spans(load_spans(TRACES))
    alert = json.loads((REPO / "examples/alerts/checkout-high-error-rate.json").read_text())
    fires = parse_time(alert["alerts"][0]["startsAt"])
    assert fires is not None and fires - 60 < last_end < fires
    calls = {
        (e.src.key["name"], e.dst.key["name"]): e.props
        for e in edges_to_records(stats, seen_at=last_end).edges
        if e.type == "CALLS"
    }
    bad = {pair for pair, p in calls.items() if float(p["error_rate"]) > 0.01}
    assert bad == {("checkout", "payment"), ("frontend", "checkout")}
    pay = calls[("checkout", "payment")]
    assert pay["error_rate"] == 0.14 and float(pay["latency_p95_ms"]) > 1000
    assert calls[("payment", "stripe")]["error_rate"] == 0.0
    # the same 11 service pairs the catalog declares
    assert len(calls) == 11


def test_log_file_is_what_its_generator_writes(tmp_path: Path) -> None:
    runpy.run_path(str(LOGS / "make_logs.py"))["main"](tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shop.jsonl"]
    assert (tmp_path / "shop.jsonl").read_bytes() == (LOGS / "shop.jsonl").read_bytes()


def test_logs_tell_the_payment_story_before_the_alert() -> None:
    """Read as the read path reads them (`FileLogs`): every service logs all along; ERROR
    lines of payment start after its rollout, and no other service's errors change."""
    source = FileLogs(LOGS)
    services = ("frontend", "checkout", "payment", "cart", "inventory", "shipping", "catalog",
                "recommendation")  # fmt: skip
    before, after = (ALERT_AT - 3600, DEPLOYED_AT), (DEPLOYED_AT, ALERT_AT)
    for name in services:
        early, late = source.lines(name, *before), source.lines(name, *after)
        assert len(early) >= 40 and len(late) >= 10, name
        errors = [sum(x.level == "ERROR" for x in lines) for lines in (early, late)]
        if name == "payment":
            assert errors == [0, 14]
            assert all(x.t > DEPLOYED_AT for x in late if x.level == "ERROR")
        elif name == "recommendation":  # a chronic error, before and after alike
            assert errors[0] >= 6 and errors[1] <= 3
        else:
            assert errors == [0, 0], name
    warned = [x for x in source.lines("checkout", *after) if x.level == "WARN"]
    assert len(warned) == 14 and all("payment answered 503" in x.text for x in warned)
