"""The CLI as a user runs it: real processes, a real embedded FalkorDB in a temp data dir."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

from sgtest import run_cli

from stackgraph.embedded import EmbeddedFalkorDB


def sg(*args: str, data: Path | None = None, env: dict[str, str] | None = None,
       ok: bool = True) -> subprocess.CompletedProcess[str]:  # fmt: skip
    return run_cli(*args, data=data, env=env, ok=ok, timeout=120)


OUTCOME_LABELS = ("Alert", "Incident", "Hypothesis", "MemoryEpisode", "MemoryEntity", "Program")


def world_model(export: str) -> list[str]:
    """Export lines of the world-model layers, without RCA outcomes and memory."""
    lines = [json.loads(line) for line in export.splitlines()]
    keep = [
        rec
        for rec in lines
        if rec.get("label") not in OUTCOME_LABELS
        and rec.get("src", {}).get("label") not in OUTCOME_LABELS
    ]
    assert len(keep) >= 30
    return [json.dumps(rec, sort_keys=True) for rec in keep]


def test_demo_is_rerunnable_and_persists_across_restarts(tmp_path: Path, examples: Path) -> None:
    data = tmp_path / "data"
    first = sg("demo", "--examples", str(examples), data=data)
    assert "checkout" not in first.stderr and "Service" in first.stdout
    export1 = sg("graph", "export", data=data).stdout
    assert export1.count('"kind":"node"') >= 15
    # the demo's own server was stopped on exit; the next command restarts from disk
    assert not EmbeddedFalkorDB(data).status()
    sg("demo", "--examples", str(examples), data=data)
    export2 = sg("graph", "export", data=data).stdout
    # the world-model is identical; outcomes may differ, since the second investigation
    # sees the first one's ROOT_CAUSED_BY as history
    assert world_model(export1) == world_model(export2)
    stats = json.loads(sg("graph", "stats", "--json", data=data).stdout)
    # CALLS: the catalog's 11 (the same 11 pairs the telemetry lane measures from the example
    # spans, so Tempo updates them rather than adding edges) + 9 CodeUnit -> Service (code lane)
    assert stats["nodes"]["Service"] == 8 and stats["edges"]["CALLS"] == 11 + 9
    assert set(stats) == {"nodes", "edges"}


def test_db_start_keeps_server_for_later_commands(tmp_path: Path, examples: Path) -> None:
    data = tmp_path / "data"
    sg("db", "start", data=data)
    try:
        assert EmbeddedFalkorDB(data).status() is not None
        cat = str(examples / "platform" / "catalog.yaml")
        sg("ingest", "--lanes", "catalog", "--catalog", cat, data=data)
        assert EmbeddedFalkorDB(data).status() is not None  # reused, not stopped
        assert "running" in sg("db", "status", data=data).stdout
    finally:
        sg("db", "stop", data=data)
    assert sg("db", "status", data=data, ok=False).returncode == 1


def test_bad_catalog_is_reported_and_valid_records_kept(tmp_path: Path, examples: Path) -> None:
    data = tmp_path / "data"
    cat = examples / "platform" / "catalog.yaml"
    text = cat.read_text().replace("calls: [carrier-api]", "calls: [carrier-api, nowhere]")
    cat.write_text(text)
    proc = sg("ingest", "--catalog", str(cat), data=data, ok=False)
    assert proc.returncode == 1
    assert "'nowhere' is not a declared" in proc.stderr and "services[7].calls[1]" in proc.stderr
    assert "1 record(s) rejected" in proc.stderr
    stats = json.loads(sg("graph", "stats", "--json", data=data).stdout)
    assert stats["nodes"]["Service"] == 8


def test_invalid_yaml_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "cat.yaml"
    bad.write_text("services:\n  - name: a\n    calls: [b\n")
    proc = sg("ingest", "--catalog", str(bad), data=tmp_path / "d", ok=False)
    assert proc.returncode == 2
    assert f"catalog {bad}:" in proc.stderr and "not valid YAML" in proc.stderr


def test_schema_field_error_names_path(tmp_path: Path) -> None:
    bad = tmp_path / "cat.yaml"
    bad.write_text("services:\n  - name: a\n    criticality: urgent\n")
    proc = sg("ingest", "--catalog", str(bad), data=tmp_path / "d", ok=False)
    assert proc.returncode == 2 and "services.0.criticality" in proc.stderr


def _one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def test_wrong_url_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = sg("graph", "stats", env={"FALKORDB_URL": f"redis://127.0.0.1:{port}"}, ok=False)
    assert f"cannot reach FalkorDB at redis://127.0.0.1:{port}" in _one_line_error(proc)


def test_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        env = {"STACKGRAPH_EMBEDDED_PORT": str(port)}
        proc = sg("graph", "stats", data=tmp_path / "d", env=env, ok=False)
    assert f"port {port} on 127.0.0.1 is already in use" in _one_line_error(proc)


def test_data_dir_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    proc = sg("graph", "stats", data=blocker / "data", ok=False)
    assert f"data dir {blocker / 'data'} cannot be created" in _one_line_error(proc)


def test_server_crash_at_start_is_one_line(tmp_path: Path) -> None:
    data = tmp_path / "d"
    data.mkdir()
    (data / "appendonlydir").mkdir()
    (data / "appendonlydir" / "appendonly.aof.manifest").write_text("garbage\n")
    proc = sg("graph", "stats", data=data, ok=False)
    assert "embedded FalkorDB exited at start-up" in _one_line_error(proc)


def test_config_file_and_env_precedence(tmp_path: Path) -> None:
    cfg = tmp_path / "sg.yaml"
    cfg.write_text(f"graph: fromfile\ndata_dir: {tmp_path / 'd'}\n")
    out = sg("--config", str(cfg), "graph", "stats")
    assert "fromfile" in out.stdout
    env_out = sg("--config", str(cfg), "graph", "stats", env={"STACKGRAPH_GRAPH": "fromenv"})
    assert "fromenv" in env_out.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("batch_size: -3\n")
    assert "batch_size" in _one_line_error(sg("--config", str(bad), "graph", "stats", ok=False))


def test_schema_show_and_apply(tmp_path: Path) -> None:
    shown = json.loads(sg("schema", "show", "--json").stdout)
    assert shown["labels"]["Endpoint"]["keys"] == ["service", "method", "route"]
    assert "Deployment" in shown["edges"]["RUNS_ON"]["from"]
    data = tmp_path / "d"
    assert "created" in sg("schema", "apply", data=data).stdout
    assert "created 0 index(es)" in sg("schema", "apply", data=data).stdout


def test_unknown_lane_lists_known(tmp_path: Path) -> None:
    proc = sg("ingest", "--lanes", "catalog,warp", data=tmp_path / "d", ok=False)
    assert "unknown lane(s) warp; known: catalog" in _one_line_error(proc)
