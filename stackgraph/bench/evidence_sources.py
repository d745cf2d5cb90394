"""Benchmark: what log and span evidence adds to `investigate`, against the same plans
without it, in one process.

The investigate benchmark's graph (10k services, 100k CALLS edges) is written through the
writer; every service gets log lines (a few templates, some ERROR lines, a burst of a new
template in a tenth of the services) and spans on its calls, in the baseline and alert
windows, written as a logcli JSON Lines file and a span CSV and read through `FileLogs`
and `FileSpans`, the sources `logs_path` and `traces_path` configure. For the same anchors
we time `investigate` without sources (the reference) and with both.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from stackgraph.config import load_settings
from stackgraph.eval.datasets.model import LogRecord
from stackgraph.eval.lane_files import write_logs, write_spans
from stackgraph.eval.records import edge_stat_records
from stackgraph.ingest import GraphIngestor
from stackgraph.ingest.lanes.telemetry import Span
from stackgraph.rca import Alert, investigate
from stackgraph.rca.sources import FileLogs, FileSpans
from stackgraph.store import GraphStore

from .investigate import T0, generate, pct

ALERT = (T0 + 300, T0 + 600)
"""The alert window `investigate(at=T0 + 600)` reads; the baseline is the 20 minutes before."""
TEMPLATES = ("served {} in {} ms", "cache miss for key {}", "user {} logged in from {}")


def _logs(names: list[str], rng: np.random.Generator) -> list[LogRecord]:
    out: list[LogRecord] = []
    for k, name in enumerate(names):
        for t in np.sort(rng.uniform(ALERT[0] - 1200, ALERT[1], 40)):
            text = TEMPLATES[int(rng.integers(0, 3))].format(*rng.integers(0, 999, 2))
            level = "ERROR" if rng.random() < 0.05 else "INFO"
            out.append(LogRecord(float(t), name, f"{level} {text}"))
        if k % 10 == 0:  # a burst of a template the baseline never showed
            out += [LogRecord(ALERT[0] + i, name, f"ERROR pool exhausted after {i} s")
                    for i in range(20)]  # fmt: skip
    return out


def _spans(edges: list[tuple[str, str]], rng: np.random.Generator, n: int) -> list[Span]:
    out: list[Span] = []
    for i, k in enumerate(rng.integers(0, len(edges), n)):
        caller, callee = edges[int(k)]
        end = float(rng.uniform(ALERT[0] - 1200, ALERT[1]))
        ms = float(rng.gamma(2.0, 20.0))
        out += [Span(f"t{i}", "c", "", caller, "", ms + 5, end),
                Span(f"t{i}", "s", "c", callee, "", ms, end)]  # fmt: skip
    return out


def run(quick: bool = False) -> str:
    n_services, n_edges, samples = (1_000, 10_000, 20) if quick else (10_000, 100_000, 100)
    n_traces = n_edges // 2
    rng = np.random.default_rng(13)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        settings = load_settings(None, data_dir=folder / "data", graph="bench-evidence")
        edges, _ = generate(n_services, n_edges)
        names = sorted({e.client for e in edges} | {e.server for e in edges})
        n_lines = write_logs(folder / "logs" / "all.jsonl", _logs(names, rng))
        calls = [(e.client, e.server) for e in edges]
        n_spans = write_spans(folder / "spans" / "all.csv", _spans(calls, rng, n_traces))
        t = time.perf_counter()
        logs = FileLogs(folder / "logs")
        load_logs = time.perf_counter() - t
        t = time.perf_counter()
        spans = FileSpans(folder / "spans")
        load_spans = time.perf_counter() - t
        with GraphStore.open(settings) as store:
            with GraphIngestor(store, batch_size=10_000, who="bench") as writer:
                writer.write(edge_stat_records(edges))
            anchors = [names[int(i)] for i in rng.integers(0, len(names), samples)]
            plain: list[float] = []
            rich: list[float] = []
            voted = 0
            for a in anchors:
                alert = Alert({"service": a}, starts_at=ALERT[1])
                t = time.perf_counter()
                investigate(store, alert, at=ALERT[1])
                plain.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                plan = investigate(store, alert, at=ALERT[1], logs=logs, spans=spans)
                rich.append((time.perf_counter() - t) * 1000)
                voted += any("logs" in c.signals for c in plan.candidates)
            with GraphIngestor(store, who="bench") as writer:
                writer.drop_graph()
    p50, p95, r50, r95 = pct(plain, 50), pct(plain, 95), pct(rich, 50), pct(rich, 95)
    return "\n".join([
        "## investigate with log and span evidence",
        "",
        "`.venv/bin/python -m stackgraph.bench --only evidence"
        f"{' --quick' if quick else ''}`: {n_services:,} services, {n_edges:,} CALLS edges; "
        f"{n_lines:,} log lines (logcli JSONL) and {n_spans:,} spans (CSV) over the baseline "
        f"and alert windows; {samples} random anchors, hops=2, limit 10, no metrics source. "
        f"Loading the files once: logs {load_logs:.1f} s, spans {load_spans:.1f} s.",
        "",
        "| plan | P50 ms | P95 ms |",
        "|---|---|---|",
        f"| `investigate` without sources (reference) | {p50:.1f} | {p95:.1f} |",
        f"| `investigate` with `FileLogs` and `FileSpans` | {r50:.1f} | {r95:.1f} |",
        "",
        f"Added per plan: P50 +{r50 - p50:.1f} ms ({r50 / p50:.1f}x), P95 +{r95 - p95:.1f} ms "
        f"({r95 / p95:.1f}x). Plans where the logs scorer voted: {voted} of {samples}.",
        "",
    ])  # fmt: skip
