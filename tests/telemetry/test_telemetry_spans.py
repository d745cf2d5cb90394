"""Span files (OTLP JSON, Jaeger JSON, CSV) paired into Tempo's edge statistics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stackgraph.cli.app import run_ingest
from stackgraph.config import Settings
from stackgraph.dump import export_records, stats
from stackgraph.errors import InputError
from stackgraph.ingest import LANES, GraphIngestor, LaneInputs
from stackgraph.ingest.lanes.telemetry import (
    EdgeStat,
    edges_to_records,
    load_spans,
    pair_report,
    parse_csv,
    stats_from_spans,
)
from stackgraph.store import GraphStore

N = 20
T0 = 1_767_225_600  # seconds


def _hex(n: int, width: int) -> str:
    return f"{n:0{width}x}"


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _topology(i: int) -> list[dict[str, Any]]:
    """One trace as plain span facts; durations and errors vary with i.

    user -> frontend -> checkout -> {orders-db (db), api.stripe.com (peer), orders.created
    -> shipping (messaging)}; plus an internal span and a same-service call, both ignored.
    """
    checkout_ms = 10 * (i + 1)  # 10..200 ms
    return [
        dict(id=1, parent=0, svc="frontend", kind="server", ms=300, err=False, attrs={}),
        dict(id=2, parent=1, svc="frontend", kind="client", ms=250, err=False, attrs={}),
        dict(
            id=3, parent=2, svc="checkout", kind="server", ms=checkout_ms, err=i in (3, 7), attrs={}
        ),
        dict(
            id=4,
            parent=3,
            svc="checkout",
            kind="client",
            ms=5,
            err=False,
            attrs={"db.system": "postgresql", "db.name": "orders", "server.address": "orders-db"},
        ),
        dict(
            id=5,
            parent=3,
            svc="checkout",
            kind="client",
            ms=100 + i,
            err=i % 2 == 0,
            attrs={"peer.service": "api.stripe.com"},
        ),
        dict(
            id=6,
            parent=3,
            svc="checkout",
            kind="producer",
            ms=2,
            err=False,
            attrs={"messaging.destination.name": "orders.created"},
        ),
        dict(
            id=7,
            parent=6,
            svc="shipping",
            kind="consumer",
            ms=40,
            err=False,
            attrs={"messaging.destination.name": "orders.created"},
        ),
        dict(id=8, parent=3, svc="checkout", kind="internal", ms=1, err=False, attrs={}),
        dict(id=9, parent=3, svc="checkout", kind="client", ms=3, err=False, attrs={}),
        dict(id=10, parent=9, svc="checkout", kind="server", ms=2, err=False, attrs={}),
    ]


_OTLP_KIND = {"internal": 1, "server": 2, "client": 3, "producer": 4, "consumer": 5}


def otlp_doc(traces: range) -> dict[str, Any]:
    """An ExportTraceServiceRequest as OTLP/JSON encodes it (hex ids, int64 as strings)."""
    by_service: dict[str, list[dict[str, Any]]] = {}
    for i in traces:
        trace_id = _hex(0x5B8EFFF798038103D269B633813FC60C + i, 32)
        for s in _topology(i):
            start = (T0 + i) * 1_000_000_000
            span: dict[str, Any] = {
                "traceId": trace_id,
                "spanId": _hex(i * 100 + s["id"], 16),
                "name": f"{s['svc']} op",
                # both encodings occur in the wild: enum number and enum name
                "kind": _OTLP_KIND[s["kind"]] if i % 2 else f"SPAN_KIND_{s['kind'].upper()}",
                "startTimeUnixNano": str(start),
                "endTimeUnixNano": str(start + int(s["ms"] * 1_000_000)),
                "attributes": [_attr(k, v) for k, v in s["attrs"].items()],
                "status": (
                    {"code": 2 if i % 2 else "STATUS_CODE_ERROR", "message": "boom"}
                    if s["err"]
                    else {}
                ),
            }
            if s["parent"]:
                span["parentSpanId"] = _hex(i * 100 + s["parent"], 16)
            by_service.setdefault(s["svc"], []).append(span)
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [
                        _attr("service.name", svc),
                        _attr("telemetry.sdk.language", "python"),
                    ]
                },
                "scopeSpans": [
                    {"scope": {"name": "opentelemetry.instrumentation"}, "spans": spans}
                ],
            }
            for svc, spans in sorted(by_service.items())
        ]
    }


def jaeger_doc(traces: range) -> dict[str, Any]:
    """What Jaeger's query API (/api/traces) and the UI's JSON download return."""
    data = []
    for i in traces:
        trace_id = _hex(0xABC000 + i, 32)
        services = sorted({s["svc"] for s in _topology(i)})
        pid = {svc: f"p{n + 1}" for n, svc in enumerate(services)}
        spans = []
        for s in _topology(i):
            tags = [{"key": "span.kind", "type": "string", "value": s["kind"]}]
            tags += [{"key": k, "type": "string", "value": v} for k, v in s["attrs"].items()]
            if s["err"]:
                tags.append({"key": "error", "type": "bool", "value": True})
            refs = (
                [
                    {
                        "refType": "CHILD_OF",
                        "traceID": trace_id,
                        "spanID": _hex(i * 100 + s["parent"], 16),
                    }
                ]
                if s["parent"]
                else []
            )
            spans.append(
                {
                    "traceID": trace_id,
                    "spanID": _hex(i * 100 + s["id"], 16),
                    "operationName": f"{s['svc']} op",
                    "references": refs,
                    "flags": 1,
                    "startTime": (T0 + i) * 1_000_000,
                    "duration": int(s["ms"] * 1000),
                    "tags": tags,
                    "logs": [],
                    "processID": pid[s["svc"]],
                    "warnings": None,
                }
            )
        processes = {p: {"serviceName": svc, "tags": []} for svc, p in pid.items()}
        data.append({"traceID": trace_id, "spans": spans, "processes": processes, "warnings": None})
    return {"data": data, "total": 0, "limit": 0, "offset": 0, "errors": None}


def by_pair(spans_stats: list[EdgeStat]) -> dict[tuple[str, str], EdgeStat]:
    return {(s.client, s.server): s for s in spans_stats}


def check_topology(stats_: list[EdgeStat]) -> None:
    got = by_pair(stats_)
    assert set(got) == {
        ("user", "frontend"),
        ("frontend", "checkout"),
        ("checkout", "orders-db"),
        ("checkout", "api.stripe.com"),
        ("checkout", "shipping"),
    }
    call = got[("frontend", "checkout")]
    assert call.trace_count == N and call.error_rate == pytest.approx(2 / N)
    # server-side durations 10..200 ms: linear-interpolated p95
    assert call.latency_p95_ms == pytest.approx(190.5)
    assert (call.connection_type, call.virtual_node) == ("", "")
    user = got[("user", "frontend")]
    assert (user.connection_type, user.virtual_node, user.latency_p95_ms) == (
        "virtual_node",
        "client",
        pytest.approx(300.0),
    )
    db = got[("checkout", "orders-db")]
    assert db.connection_type == "database" and db.latency_p95_ms == pytest.approx(5.0)
    peer = got[("checkout", "api.stripe.com")]
    assert (peer.connection_type, peer.virtual_node) == ("virtual_node", "server")
    assert peer.error_rate == pytest.approx(0.5)
    msg = got[("checkout", "shipping")]
    assert (msg.connection_type, msg.subject) == ("messaging_system", "orders.created")
    assert msg.latency_p95_ms == pytest.approx(40.0)


def test_otlp_json(tmp_path: Path) -> None:
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(otlp_doc(range(N))))
    spans = load_spans(path)
    assert len(spans) == N * 10
    stats_, seen_at = stats_from_spans(spans)
    check_topology(stats_)
    assert seen_at == pytest.approx(T0 + N - 1 + 0.3)


def test_otlp_json_lines_from_the_collector_file_exporter(tmp_path: Path) -> None:
    path = tmp_path / "export.jsonl"
    lines = [json.dumps(otlp_doc(range(k, k + 5))) for k in range(0, N, 5)]
    path.write_text("\n".join(lines) + "\n")
    check_topology(stats_from_spans(load_spans(path))[0])


def test_jaeger_json(tmp_path: Path) -> None:
    path = tmp_path / "jaeger.json"
    path.write_text(json.dumps(jaeger_doc(range(N))))
    stats_, seen_at = stats_from_spans(load_spans(path))
    check_topology(stats_)
    assert seen_at == pytest.approx(T0 + N - 1 + 0.3)


def test_csv_spans(tmp_path: Path) -> None:
    path = tmp_path / "spans.csv"
    rows = ["trace_id,span_id,parent_span_id,service,kind,duration_ms,status,peer.service"]
    for i in range(4):
        rows.append(f"t{i},a,,web,server,50,ok,")
        rows.append(f"t{i},b,a,web,client,45,ok,")
        rows.append(f"t{i},c,b,api,server,{10 * (i + 1)},{'error' if i == 0 else 'ok'},")
        rows.append(f"t{i},d,c,api,client,7,ok,github")
    path.write_text("\n".join(rows) + "\n")
    got = by_pair(stats_from_spans(load_spans(path))[0])
    assert set(got) == {("user", "web"), ("web", "api"), ("api", "github")}
    assert got[("web", "api")].error_rate == 0.25
    assert got[("web", "api")].latency_p95_ms == pytest.approx(38.5)
    assert got[("api", "github")].virtual_node == "server"


def test_folder_reads_every_span_file(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.json").write_text(json.dumps(otlp_doc(range(10))))
    (tmp_path / "two.json").write_text(json.dumps(otlp_doc(range(10, N))))
    (tmp_path / "notes.txt").write_text("not spans")
    check_topology(stats_from_spans(load_spans(tmp_path))[0])


def test_bad_span_files_name_the_file_and_place(tmp_path: Path) -> None:
    doc = otlp_doc(range(1))
    del doc["resourceSpans"][1]["scopeSpans"][0]["spans"][0]["spanId"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(
        InputError,
        match=r"bad\.json: resourceSpans\[1\]\.scopeSpans\[0\]"
        r"\.spans\[0\]: missing spanId",
    ):
        load_spans(bad)
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    with pytest.raises(InputError, match="neither OTLP JSON"):
        load_spans(other)
    broken = tmp_path / "broken.json"
    broken.write_text('{"resourceSpans": [')
    with pytest.raises(InputError, match=r"broken\.json:1:\d+ is not JSON"):
        load_spans(broken)
    csv_file = tmp_path / "s.csv"
    csv_file.write_text("trace_id,span_id\n1,2\n")
    with pytest.raises(InputError, match="lacks column"):
        load_spans(csv_file)
    with pytest.raises(InputError, match="does not exist"):
        load_spans(tmp_path / "missing.json")


def test_span_ingest_is_rerunnable(tmp_path: Path, settings: Settings, store: GraphStore) -> None:
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(otlp_doc(range(N))))
    first = run_ingest(settings, "telemetry", options={"spans": path}, store=store)
    assert not first.rejected
    assert first.edges["CALLS"].created == 2 and first.edges["READS_FROM"].created == 1
    exported = sorted(json.dumps(r, sort_keys=True) for r in export_records(store))
    again = run_ingest(settings, "telemetry", options={"spans": path}, store=store)
    assert again.edges["CALLS"].unchanged == 2 and not again.stale
    assert sorted(json.dumps(r, sort_keys=True) for r in export_records(store)) == exported
    assert stats(store)["edges"] == {
        "CALLS": 2,
        "CONSUMES_FROM": 1,
        "PUBLISHES_TO": 1,
        "READS_FROM": 1,
    }


def test_cli_ingest_spans(tmp_path: Path) -> None:
    path = tmp_path / "jaeger.json"
    path.write_text(json.dumps(jaeger_doc(range(N))))
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKGRAPH_")}
    env["STACKGRAPH_DATA_DIR"] = str(tmp_path / "data")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "stackgraph",
            "ingest",
            "--lanes",
            "telemetry",
            "--spans",
            str(path),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["edges"]["CALLS"]["created"] == 2
    assert report["nodes"]["Datastore"]["created"] == 1
    assert report["rejected"] == []


# -- the pure edge builder ----------------------------------------------------------------


def test_edges_to_records_mapping_and_endpoints(store: GraphStore) -> None:
    stats_ = [
        EdgeStat("web", "api", 100, 0.01, 42.0),
        EdgeStat("user", "web", 50, 0.0, 1.0, "virtual_node"),  # no virtual_node label
        EdgeStat("api", "pg", 10, 0.0, 3.0, "database"),
        EdgeStat("api", "stripe", 10, 0.5, 300.0, "virtual_node"),  # server side is virtual
        EdgeStat("api", "worker-a", 6, 0.0, 2.0, "messaging_system", subject="jobs"),
        EdgeStat("api", "worker-b", 4, 0.5, 9.0, "messaging_system", subject="jobs"),
        EdgeStat("api", "mailer", 3, 0.0, 1.0, "messaging_system"),  # no subject label
        EdgeStat("api", "idle", 0, 0.0, None),  # nothing in the window: not seen
        EdgeStat("api", "nan", float("nan"), 0.0, None),
        EdgeStat("web", "api", 100, float("nan"), float("nan")),  # adds calls, no measure
    ]
    batch = edges_to_records(stats_, seen_at=123.0)
    got = {str(e): dict(e.props) for e in batch.edges}
    assert set(got) == {
        "(Service{name='web'})-[:CALLS]->(Service{name='api'})",
        "(Service{name='api'})-[:READS_FROM]->(Datastore{name='pg'})",
        "(Service{name='api'})-[:CALLS]->(ExternalApi{name='stripe'})",
        "(Service{name='api'})-[:PUBLISHES_TO]->(NatsSubject{subject='jobs'})",
        "(Service{name='worker-a'})-[:CONSUMES_FROM]->(NatsSubject{subject='jobs'})",
        "(Service{name='worker-b'})-[:CONSUMES_FROM]->(NatsSubject{subject='jobs'})",
        "(Service{name='api'})-[:CALLS]->(Service{name='mailer'})",
    }
    publish = got["(Service{name='api'})-[:PUBLISHES_TO]->(NatsSubject{subject='jobs'})"]
    assert publish == {
        "trace_count": 10,
        "error_rate": 0.2,
        "latency_p95_ms": 9.0,
        "observed_at": 123.0,
    }
    mail = got["(Service{name='api'})-[:CALLS]->(Service{name='mailer'})"]
    assert mail["connection_type"] == "messaging_system"
    assert all(e.source == "Tempo" for e in batch.edges)
    nodes = {str(n): dict(n.props) for n in batch.nodes}
    assert nodes["Service{name='web'}"] == {"entrypoint": True}
    assert not {"Service{name='user'}", "Service{name='idle'}", "Service{name='nan'}"} & set(nodes)
    call = got["(Service{name='web'})-[:CALLS]->(Service{name='api'})"]
    assert call["trace_count"] == 200 and call["error_rate"] == 0.01  # of the measured 100
    assert call["latency_p95_ms"] == 42.0
    assert all(n.source == "Tempo" for n in batch.nodes)
    # every endpoint is in the batch: the writer rejects nothing
    with GraphIngestor(store) as writer:
        report = writer.write(batch)
    assert report.rejected == []
    assert edges_to_records(list(reversed(stats_)), seen_at=123.0) == batch


NEZHA_CSV = (
    "TraceID,SpanID,ParentID,PodName,OperationName,StartTimeUnixNano,EndTimeUnixNano,Duration\n"
    """t1,a,root,ts-gateway-service-6f6cfc45b-h5m2n,/*,1674981768000000000,1674981768300000000,300000000
t1,b,a,ts-gateway-service-6f6cfc45b-h5m2n,handle,1674981768010000000,1674981768290000000,280000000
t1,c,b,ts-order-service-7d9f8b7c5d-x2x7z,getOrder,1674981768020000000,1674981768220000000,200000000
t1,d,c,ts-order-service-7d9f8b7c5d-x2x7z,query,1674981768030000000,1674981768130000000,100000000
t1,e,c,ts-station-service-5f55b6cf68-77cfw,station,1674981768140000000,1674981768190000000,50000000
"""
)


def test_spans_without_kind_pair_across_pods(tmp_path: Path) -> None:
    """Nezha's traces: no kind, no status; a child in another pod's service is the call."""
    import gzip

    path = tmp_path / "08_44_trace.csv.gz"
    path.write_bytes(gzip.compress(NEZHA_CSV.encode()))
    spans = load_spans(tmp_path)
    assert {s.service for s in spans} == {"ts-gateway-service", "ts-order-service",
                                          "ts-station-service"}  # fmt: skip
    got = by_pair(stats_from_spans(spans)[0])
    assert set(got) == {("user", "ts-gateway-service"), ("ts-gateway-service", "ts-order-service"),
                        ("ts-order-service", "ts-station-service")}  # fmt: skip
    assert got[("ts-gateway-service", "ts-order-service")].latency_p95_ms == pytest.approx(200.0)
    assert stats_from_spans(spans)[1] == pytest.approx(1674981768.3)


def test_span_files_without_a_status_write_no_error_rate(
    tmp_path: Path, settings: Settings
) -> None:
    """No status column: a 0% error rate would be one nobody recorded (as where Tempo
    recorded no failure at all); a status column, even all `ok`, is a measurement."""
    (tmp_path / "nezha.csv").write_text(NEZHA_CSV)
    blind = LANES["telemetry"].collect(LaneInputs(settings, options={"spans": tmp_path}))
    assert blind.edges and all("error_rate" not in e.props for e in blind.edges)
    assert all(e.props["latency_p95_ms"] > 0 for e in blind.edges)
    with_status = NEZHA_CSV.replace("Duration\n", "Duration,Status\n").replace("000\n", "000,ok\n")
    (tmp_path / "nezha.csv").write_text(with_status)
    seen = LANES["telemetry"].collect(LaneInputs(settings, options={"spans": tmp_path}))
    assert seen.edges and all(e.props["error_rate"] == 0.0 for e in seen.edges)


def test_spans_that_pair_into_nothing_say_why(tmp_path: Path, settings: Settings) -> None:
    rootless = NEZHA_CSV.replace(",root,", ",zz,")
    lonely = rootless.replace("ts-order-service", "ts-gateway-service").replace(
        "ts-station-service", "ts-gateway-service"
    )
    for text, why in ((lonely, "every span is in one service (ts-gateway-service)"),
                      (rootless.replace(",a,zz,", ",a,,").replace("t1,b,a", "t1,b,x"),
                       "no child span's parent is in another service")):  # fmt: skip
        spans = parse_csv(text, "x.csv")
        stats_, _ = stats_from_spans(spans)
        assert pair_report(spans, stats_).endswith(why) or stats_, (text, stats_)
    spans = parse_csv(lonely, "x.csv")
    assert pair_report(spans, stats_from_spans(spans)[0]) == (
        "5 span(s) read, 0 call(s) on 0 pair(s): none paired, every span is in one service "
        "(ts-gateway-service)"
    )
    good = parse_csv(NEZHA_CSV, "x.csv")
    assert pair_report(good, stats_from_spans(good)[0]) == "5 span(s) read, 3 call(s) on 3 pair(s)"
    (tmp_path / "lonely.csv").write_text(lonely)
    with pytest.raises(InputError, match="none paired, every span is in one service"):
        LANES["telemetry"].collect(LaneInputs(settings, options={"spans": tmp_path / "lonely.csv"}))
