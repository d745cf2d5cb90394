"""Benchmark: the plan's metrics probes against a real Prometheus, the candidates probed
one at a time (the reference) and side by side (`rca.read_time.PROBE_WORKERS`).

The seeded incidents' telemetry is backfilled into Debian's Prometheus (the replay's own
`dataset_prometheus`); for each incident, every service of its world is a candidate and
`probes` reads each one's series in the alert and baseline windows. Both ways run on the
same incidents, interleaved, in one process; the probes must come back the same.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from stackgraph.config import load_settings
from stackgraph.eval.harness import dataset_prometheus
from stackgraph.eval.openmetrics import place
from stackgraph.eval.seeded import load_seeded
from stackgraph.rca import Alert
from stackgraph.rca.facts import Facts, Request
from stackgraph.rca.read_time import PROBE_WORKERS, probes
from stackgraph.rca.rows import node_fact
from stackgraph.rca.sources import PrometheusMetrics
from stackgraph.rca.windows import windows_for

from .investigate import pct


def _timed(req: Request, facts: Facts, workers: int) -> tuple[float, Facts]:
    t = time.perf_counter()
    out = probes(None, req, facts, workers)  # type: ignore[arg-type]  # probes read no graph
    return (time.perf_counter() - t) * 1000, out


def run(quick: bool = False) -> str:
    cases = place(load_seeded())[: 6 if quick else None]
    rounds = 1 if quick else 3
    one: list[float] = []
    side: list[float] = []
    sizes: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(None, data_dir=Path(tmp), graph="bench-probes")
        with dataset_prometheus(cases, settings, {}) as (sources, _):
            metrics = PrometheusMetrics.from_settings(settings.model_copy(update=sources))
            try:
                for _ in range(rounds):
                    for case in cases:
                        at = case.alert_window[0] + 300
                        alert = Alert({"service": case.services[0]}, starts_at=at)
                        req = Request(alert, windows_for(alert, at), 2, 10, metrics)
                        nodes = {s: node_fact(s, {}, depth=1) for s in case.services}
                        facts = Facts(anchor=case.services[0], nodes=nodes, windows=req.windows)
                        ms, alone = _timed(req, facts, 1)
                        one.append(ms)
                        ms, together = _timed(req, facts, PROBE_WORKERS)
                        side.append(ms)
                        assert alone.probes == together.probes, case.case_id
                        sizes.append(len(nodes))
            finally:
                metrics.close()
    o50, o95, s50, s95 = pct(one, 50), pct(one, 95), pct(side, 50), pct(side, 95)
    cmd = "python -m stackgraph.bench --only probes" + (" --quick" if quick else "")
    return "\n".join([
        "## Metrics probes: one candidate at a time vs side by side",
        "",
        f"Command: `{cmd}`: {len(cases)} seeded incidents backfilled into Debian's "
        f"Prometheus, every service of each a candidate ({min(sizes)}-{max(sizes)} per "
        f"plan), {rounds} round(s), both ways interleaved; the probes are the same.",
        "",
        "| probes | P50 ms per plan | P95 ms per plan |",
        "|---|---|---|",
        f"| one candidate at a time (reference) | {o50:.1f} | {o95:.1f} |",
        f"| side by side ({PROBE_WORKERS} at a time, the first alone) | {s50:.1f} | {s95:.1f} |",
        "",
        f"Ratio side by side / one at a time: P50 {s50 / o50:.2f}x, P95 {s95 / o95:.2f}x.",
        "",
    ])  # fmt: skip
