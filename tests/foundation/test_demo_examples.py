"""The demo's example span files: what they say, and that they match their generator."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

from sgtest import REPO

from stackgraph.ingest.lanes.telemetry import edges_to_records, load_spans, stats_from_spans
from stackgraph.rca.clock import parse_time

TRACES = REPO / "examples" / "platform" / "traces"


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
