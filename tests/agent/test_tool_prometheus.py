"""`prometheus_query` against Debian's Prometheus holding backfilled service-graph series
whose error ratio and latency change half-way (the alert window vs its baseline)."""

from __future__ import annotations

import dataclasses
import json
import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from telemetry.telemetry_promserver import BUCKETS, START, STEP, running_prometheus
from test_floor_checks import git
from tool_servers import serve_json

from stackgraph.api.app import context_from
from stackgraph.api.outcome_codec import run_doc, run_from
from stackgraph.config import load_settings
from stackgraph.promql import PromQLNames
from stackgraph.rca.agent import (
    AgentRun,
    Ending,
    HypothesisState,
    Report,
    ToolContext,
    ToolResult,
    ToolStatus,
    Verdict,
    call_tool,
    default_tools,
)
from stackgraph.rca.agent.checks import run_check
from stackgraph.rca.agent.report import build_report
from stackgraph.rca.agent.sink import EvidenceSink
from stackgraph.rca.model import Alert, Plan
from stackgraph.rca.series import MIN_POINTS
from stackgraph.store import GraphStore

POINTS = 240
CHANGE = 120
"""Index of the first sample whose increment is in the second phase."""
END = START + STEP * (POINTS - 1)
WINDOW = STEP * CHANGE  # 1800 s: the alert window is phase two, the baseline phase one
PER_STEP = 300


@dataclass(frozen=True)
class Phase:
    failed: int
    """Failed calls per step (of PER_STEP)."""
    mean_s: float

    def bucket(self, le: float) -> int:
        return round(PER_STEP * (1.0 - math.exp(-le / self.mean_s)))

    def ratio(self) -> float:
        return self.failed / PER_STEP

    def p95(self) -> float:
        """histogram_quantile(0.95) of this phase's per-step buckets (linear in-bucket, as
        Prometheus does; increase()'s extrapolation scales every bucket alike)."""
        rank, lower, below = 0.95 * PER_STEP, 0.0, 0
        for le in BUCKETS:
            upto = self.bucket(le)
            if upto >= rank:
                return lower + (le - lower) * (rank - below) / (upto - below)
            lower, below = le, upto
        return BUCKETS[-1]


SERIES: dict[str, tuple[Phase, Phase]] = {
    "payment": (Phase(3, 0.05), Phase(60, 0.05)),  # errors 1% -> 20%, latency steady
    "checkout": (Phase(0, 0.04), Phase(0, 0.04)),  # healthy; never failed (no failed series)
    "inventory": (Phase(1, 0.05), Phase(1, 0.6)),  # latency 0.15 s -> 1.8 s
    "ledger": (Phase(30, 0.3), Phase(30, 0.3)),  # chronic: 10% errors, ~0.9 s, unchanged
    "orders": (Phase(3, 0.05), Phase(60, 0.05)),  # as payment, but recorded with a gap
    "shipping": (Phase(1, 0.05), Phase(1, 0.05)),  # steady, then LATE
    "frontend": (Phase(3, 0.05), Phase(60, 0.5)),  # errors and p95 rise: its callees'
    "gateway": (Phase(3, 0.05), Phase(120, 0.05)),  # errors 1% -> 40%, its own
    "basket": (Phase(0, 0.04), Phase(0, 0.04)),  # gateway's one callee, healthy
    "carrier": (Phase(1, 0.05), Phase(1, 0.05)),  # steady, then LATE
    "shop": (Phase(1, 0.05), Phase(1, 0.6)),  # p95 rises: it waits on warehouse's network
    "warehouse": (Phase(1, 0.05), Phase(1, 0.05)),  # serves as fast as ever
    "refunds": (Phase(3, 0.05), Phase(60, 0.05)),  # as payment, but its series stop early
}
CLIENT = {"frontend": "user", "gateway": "user", "basket": "gateway", "carrier": "user",
          "shop": "user", "warehouse": "shop", "refunds": "user"}  # fmt: skip
WAITED = {"warehouse": (Phase(1, 0.05), Phase(1, 0.6))}
"""Client-side p95 (as the caller waits, network included), where it differs from the
server's: a delay on warehouse's network, which its own spans do not see."""
"""Who calls each server (default frontend): frontend calls payment, whose errors rise as
much as its own, and inventory, whose p95 rises more; gateway calls only healthy basket."""
LATE = {"shipping": (Phase(30, 0.05), 20), "carrier": (Phase(60, 0.05), 4)}
"""A fault of the last steps only: shipping 10% errors in the last 5 minutes, about 2% over
the whole 30-minute window; carrier 20% in the last minute, about 4% over the last 5."""
CORES = {False: 0.1, True: 0.5}
"""payment's CPU (cores) before and in the alert window; its memory stays at MEMORY bytes."""
MEMORY = 3 * 2**28
GAP = {"orders": range(40, 200), "refunds": range(POINTS - 60, POINTS)}
"""Steps not scraped: orders has the first 10 minutes and the last 10 only; refunds stops
15 minutes before the end (its errors rose before that)."""


MESH = PromQLNames(
    requests="mesh_request_total",
    failed="mesh_request_failed_total",
    server_seconds="mesh_request_seconds",
    pods="<<service>>-pod-[0-9]+",
)
"""Another installation's names (another connector, StatefulSet-like pods): payment's series
are recorded under them too."""
OTHER_PODS = {"payment-db-5d9c7b8f6d-q8w2e": 2.0, "payment-pod-0": None}
"""Pods beside payment's own: its database's (steady cores; a pod of another service, though
its name starts with payment's) and payment's under MESH's pattern (payment's cores)."""


def openmetrics() -> str:
    lines: list[str] = []
    step_values: dict[str, list[tuple[Phase, int]]] = {}
    for server, (one, two) in SERIES.items():
        step_values[server] = [
            (LATE[server][0] if server in LATE and i >= POINTS - LATE[server][1]
             else one if i < CHANGE else two, i)
            for i in range(POINTS)
        ]  # fmt: skip

    def cumulative(server: str, per_step: Any) -> list[tuple[int, float]]:
        total, out = 0.0, []
        for phase, i in step_values[server]:
            total += per_step(phase)
            if i not in GAP.get(server, ()):
                out.append((START + i * STEP, total))
        return out

    def edge(server: str) -> str:
        return f'client="{CLIENT.get(server, "frontend")}",server="{server}"'

    def service_graph(fam: str, hist: str, servers: Any, le_unit: float = 1.0) -> None:
        lines.append(f"# TYPE {fam} counter")
        for server in servers:
            for t, v in cumulative(server, lambda p: PER_STEP):
                lines.append(f"{fam}_total{{{edge(server)}}} {v} {t}")
        lines.append(f"# TYPE {fam}_failed counter")
        for server in servers:
            one, two = SERIES[server]
            if one.failed == two.failed == 0:
                continue  # Tempo creates the failed counter on the first failure
            for t, v in cumulative(server, lambda p: p.failed):
                lines.append(f"{fam}_failed_total{{{edge(server)}}} {v} {t}")
        lines.append(f"# TYPE {hist} histogram")
        for server in servers:
            labels = edge(server)
            for le in BUCKETS:
                for t, v in cumulative(server, lambda p, le=le: p.bucket(le)):
                    lines.append(f'{hist}_bucket{{{labels},le="{le / le_unit:g}"}} {v} {t}')
            for t, v in cumulative(server, lambda p: PER_STEP):
                lines.append(f'{hist}_bucket{{{labels},le="+Inf"}} {v} {t}')
                lines.append(f"{hist}_count{{{labels}}} {v} {t}")

    service_graph("traces_service_graph_request", "traces_service_graph_request_server_seconds",
                  SERIES)  # fmt: skip
    hist = "traces_service_graph_request_client_seconds"
    lines.append(f"# TYPE {hist} histogram")
    for server, phases in WAITED.items():
        for le in [*BUCKETS, math.inf]:
            total = 0
            for i in range(POINTS):
                phase = phases[0] if i < CHANGE else phases[1]
                total += PER_STEP if le == math.inf else phase.bucket(le)
                le_text = "+Inf" if le == math.inf else f"{le:g}"
                lines.append(f'{hist}_bucket{{{edge(server)},le="{le_text}"}} {total} '
                             f"{START + i * STEP}")  # fmt: skip
    service_graph("mesh_request", "mesh_request_seconds", ["payment"])
    service_graph("ms_request", "ms_request_duration", ["frontend", "inventory", "payment"],
                  le_unit=0.001)  # fmt: skip
    pods = {"payment-5d9c7b8f6d-x2x4q": None, **OTHER_PODS}
    lines.append("# TYPE container_cpu_usage_seconds_total counter")
    for name, steady in pods.items():
        pod = f'namespace="shop",pod="{name}",container="payment"'
        for t, v in cumulative("payment", lambda p, steady=steady: STEP * (
                steady if steady is not None else CORES[p is SERIES["payment"][1]])):  # fmt: skip
            lines.append(f"container_cpu_usage_seconds_total{{{pod}}} {v} {t}")
    lines.append("# TYPE container_memory_working_set_bytes gauge")
    for name in pods:
        pod = f'namespace="shop",pod="{name}",container="payment"'
        for i in range(POINTS):
            lines.append(f"container_memory_working_set_bytes{{{pod}}} {MEMORY} {START + i * STEP}")
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="session")
def promurl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_prometheus(tmp_path_factory.mktemp("agent-prom"), openmetrics()) as url:
        yield url


TOOL = default_tools()["prometheus_query"]


def measure(
    url: str, service: str, signal: str, names: PromQLNames | None = None
) -> tuple[Any, Verdict]:
    ctx = ToolContext(prometheus_url=url, at=float(END), window_s=float(WINDOW),
                      promql=names or PromQLNames())  # fmt: skip
    result = call_tool(TOOL, ctx, {"service": service, "signal": signal})
    return result, TOOL.check(result, service, float(END), float(WINDOW))


def test_error_ratio_rising_in_the_window_supports(promurl: str) -> None:
    result, verdict = measure(promurl, "payment", "error_rate")
    assert result.status == ToolStatus.SUCCESS, result.summary
    before, after = SERIES["payment"]
    assert result.data["window"] == pytest.approx(after.ratio(), rel=1e-6)
    assert result.data["baseline"] == pytest.approx(before.ratio(), rel=1e-6)
    assert verdict == Verdict.SUPPORTS
    assert "error rate 20% in the 30 min before the alert" in result.summary
    latency, steady = measure(promurl, "payment", "latency_p95")
    assert latency.data["window"] == pytest.approx(after.p95(), rel=1e-6)
    assert steady == Verdict.REFUTES  # fast and unchanged; errors still carry the tool


def test_latency_rising_in_the_window_supports(promurl: str) -> None:
    result, verdict = measure(promurl, "inventory", "latency_p95")
    before, after = SERIES["inventory"]
    assert result.data["window"] == pytest.approx(after.p95(), rel=1e-6)
    assert result.data["baseline"] == pytest.approx(before.p95(), rel=1e-6)
    assert verdict == Verdict.SUPPORTS
    errors, healthy = measure(promurl, "inventory", "error_rate")
    assert errors.data["window"] == pytest.approx(1 / PER_STEP, rel=1e-6)
    assert healthy == Verdict.REFUTES


def test_a_rise_its_callees_show_as_strongly_is_theirs(promurl: str) -> None:
    """frontend's errors rise 1% -> 20% exactly as its calls to payment (and orders) do, and
    its p95 less than its calls to inventory: both rises are its callees', seen through it."""
    errors, verdict = measure(promurl, "frontend", "error_rate")
    assert errors.data["window"] == pytest.approx(0.2, rel=1e-6)
    callees = {c["server"]: c for c in errors.data["callees"]}
    assert callees["payment"]["window"] == pytest.approx(0.2, rel=1e-6)
    named = errors.summary.rpartition("the rise comes from ")[2]
    assert named in {"payment", "orders"}  # both rose 1% -> 20%: a tie, by name
    assert f"; its calls to {named} rose as much (1% → 20%)" in errors.summary
    assert verdict == Verdict.INCONCLUSIVE
    latency, verdict = measure(promurl, "frontend", "latency_p95")
    assert latency.data["window"] > 2 * latency.data["baseline"]
    assert "its calls to inventory rose as much" in latency.summary
    assert verdict == Verdict.INCONCLUSIVE
    alone = {**errors.data, "callees": []}  # without its callees the same numbers support
    assert TOOL.check(ToolResult(ToolStatus.SUCCESS, "", alone), "frontend", float(END),
                      float(WINDOW)) == Verdict.SUPPORTS  # fmt: skip
    # no window counts frontend's own errors risen: the rise is its callees'
    assert TOOL.judged_windows is not None
    assert Verdict.SUPPORTS not in dict(TOOL.judged_windows(errors, float(WINDOW))).values()
    alone_windows = TOOL.judged_windows(ToolResult(ToolStatus.SUCCESS, "", alone), float(WINDOW))
    assert Verdict.SUPPORTS in dict(alone_windows).values()


def test_a_callee_slowed_by_its_network_is_seen_as_the_caller_waits(promurl: str) -> None:
    """shop's p95 rises because its calls to warehouse wait longer on warehouse's network:
    warehouse's own spans are as fast as ever, and the calls as shop waits for them (the
    client-side histogram, the read path's `edge_latency`) rose as much."""
    latency, verdict = measure(promurl, "shop", "latency_p95")
    (warehouse,) = latency.data["callees"]
    assert warehouse["window"] > 2 * warehouse["baseline"]
    assert "its calls to warehouse rose as much" in latency.summary
    assert verdict == Verdict.INCONCLUSIVE


def test_a_delay_on_its_own_network_is_its_own_latency(promurl: str) -> None:
    """warehouse's spans are as fast as ever, but its callers wait 12 times as long on its
    network: its p95 is read as its callers wait for it (the read path counts the calls into
    it as its own latency), so the check supports; a service no client-side histogram
    records (inventory) is read as it served, as before."""
    latency, verdict = measure(promurl, "warehouse", "latency_p95")
    waited = WAITED["warehouse"]
    assert latency.data["window"] == pytest.approx(waited[1].p95(), rel=0.05)
    assert latency.data["baseline"] == pytest.approx(waited[0].p95(), rel=0.05)
    assert "client_seconds" in latency.data["query"]
    assert verdict == Verdict.SUPPORTS
    served, _ = measure(promurl, "inventory", "latency_p95")
    assert served.data["window"] == pytest.approx(SERIES["inventory"][1].p95(), rel=0.05)


def test_a_rise_of_its_own_supports_beside_healthy_callees(promurl: str) -> None:
    result, verdict = measure(promurl, "gateway", "error_rate")
    assert result.data["callees"] == []  # basket never failed: it has no error ratio at all
    assert "rose as much" not in result.summary
    assert verdict == Verdict.SUPPORTS
    latency, _ = measure(promurl, "gateway", "latency_p95")
    (basket,) = latency.data["callees"]
    assert basket["server"] == "basket"
    assert basket["window"] == pytest.approx(basket["baseline"], rel=1e-6)


def test_a_series_that_stopped_before_the_alert_judges_nothing(promurl: str) -> None:
    """A Stale edge's series: its errors rose, then it stopped 15 minutes before the alert.
    The 30-minute window still holds the rise; the last 5 minutes hold nothing."""
    result, verdict = measure(promurl, "refunds", "error_rate")
    assert result.data["window"] == pytest.approx(0.2, rel=0.05)
    assert result.data["stopped"] is True and "short" not in result.data
    assert "no data in the last 5 min: its series stopped before the alert" in result.summary
    assert verdict == Verdict.INCONCLUSIVE
    assert TOOL.check(dataclasses.replace(result, data={**result.data, "stopped": False}),
                      "refunds", float(END), float(WINDOW)) == Verdict.SUPPORTS  # fmt: skip
    running, _ = measure(promurl, "payment", "error_rate")
    assert "stopped" not in running.data


def test_a_healthy_service_that_never_failed_is_refuted(promurl: str) -> None:
    result, verdict = measure(promurl, "checkout", "error_rate")
    assert result.status == ToolStatus.SUCCESS  # `or vector(0)`: no failed series at all
    assert result.data["window"] == 0.0 and result.data["baseline"] == 0.0
    assert verdict == Verdict.REFUTES


def test_where_no_failure_is_ever_recorded_an_error_ratio_of_0_refutes_nothing(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Spans without a status: Tempo records calls, never a failed one, for any service."""
    fam = "traces_service_graph_request"
    lines = [f"# TYPE {fam} counter"]
    lines += [f'{fam}_total{{client="frontend",server="checkout"}} {PER_STEP * (i + 1)} '
              f"{START + i * STEP}" for i in range(POINTS)]  # fmt: skip
    with running_prometheus(tmp_path_factory.mktemp("no-status"), "\n".join([*lines, "# EOF"])
                            + "\n") as url:  # fmt: skip
        result, verdict = measure(url, "checkout", "error_rate")
    assert result.status == ToolStatus.NO_DATA, result.summary
    assert "no failed call of any service is recorded" in result.summary
    assert verdict == Verdict.INCONCLUSIVE


def test_a_chronic_bad_signal_is_inconclusive(promurl: str) -> None:
    errors, verdict = measure(promurl, "ledger", "error_rate")
    assert errors.data["window"] == pytest.approx(0.1, rel=1e-6)
    assert errors.data["baseline"] == pytest.approx(0.1, rel=1e-6)
    assert verdict == Verdict.INCONCLUSIVE
    latency, verdict = measure(promurl, "ledger", "latency_p95")
    assert latency.data["window"] == pytest.approx(SERIES["ledger"][1].p95(), rel=1e-6)
    assert verdict == Verdict.INCONCLUSIVE


@pytest.mark.parametrize(
    ("signal", "window", "baseline", "verdict"),
    [
        ("error_rate", 0.002, 0.002, Verdict.REFUTES),  # low and steady: healthy
        ("error_rate", 0.009, 0.002, Verdict.INCONCLUSIVE),  # low but 4.5x: a change, not health
        ("error_rate", 0.002, None, Verdict.REFUTES),  # no baseline: the level alone
        ("error_rate", 0.06, 0.002, Verdict.SUPPORTS),
        ("latency_p95", 2.5, None, Verdict.INCONCLUSIVE),  # slow since when? no baseline to say
        ("latency_p95", 0.02, None, Verdict.REFUTES),  # fast is healthy whatever it was before
        ("latency_p95", 2.5, 0.5, Verdict.SUPPORTS),  # five times its baseline
        ("latency_p95", 2.5, 2.4, Verdict.INCONCLUSIVE),  # chronic
    ],
)
def test_a_level_refutes_only_unrisen_and_a_slow_p95_supports_only_against_a_baseline(
    signal: str, window: float, baseline: float | None, verdict: Verdict
) -> None:
    data = {"signal": signal, "window": window, "baseline": baseline}
    result = ToolResult(ToolStatus.SUCCESS, "", data)
    assert TOOL.check(result, "payment", float(END), float(WINDOW)) == verdict


def test_a_fault_of_the_last_minutes_is_seen_in_the_short_window(promurl: str) -> None:
    """Diluted in the 30-minute window (about 2%, inconclusive alone), the last 5 minutes'
    10% against the baseline's 0.3% supports."""
    result, verdict = measure(promurl, "shipping", "error_rate")
    assert 0.01 < result.data["window"] < 0.05
    assert result.data["short"] == pytest.approx(0.1, rel=0.05)
    assert result.data["short_s"] == 300
    assert "in the last 5 min" in result.summary
    assert verdict == Verdict.SUPPORTS
    assert TOOL.judged_windows is not None  # which windows: what a release is timed against
    judged = dict(TOOL.judged_windows(result, float(WINDOW)))
    assert judged[float(WINDOW)] == Verdict.INCONCLUSIVE and judged[300.0] == Verdict.SUPPORTS
    alone = {**result.data, "short": None, "latest": None}
    assert TOOL.check(ToolResult(ToolStatus.SUCCESS, "", alone), "shipping", float(END),
                      float(WINDOW)) == Verdict.INCONCLUSIVE  # fmt: skip


def _accepted(url: str) -> float:
    """Connections Prometheus has accepted on its HTTP listener (its own metric)."""
    text = httpx.get(f"{url}/metrics", timeout=10.0).text
    line = next(x for x in text.splitlines()
                if x.startswith("net_conntrack_listener_conn_accepted_total{"))  # fmt: skip
    return float(line.rsplit(" ", 1)[1])


def test_a_check_reuses_one_connection(promurl: str) -> None:
    """A check is several GETs (the windows, the band, the callees): over one pooled
    connection, not one connection (and TLS context) each."""
    before = _accepted(promurl)
    result, _ = measure(promurl, "frontend", "error_rate")
    assert result.status == ToolStatus.SUCCESS and len(result.data["callees"]) >= 2
    assert _accepted(promurl) - before <= 2  # the tool's pooled one, and this read's own


def test_a_fault_of_the_last_minute_is_seen_in_the_rate_window(promurl: str) -> None:
    """An alert fires while its cause is present: 20% errors over the last minute (the
    read path's rate window), diluted to about 4% over 5 minutes and under 1% over 30
    (inconclusive both), supports."""
    result, verdict = measure(promurl, "carrier", "error_rate")
    assert result.data["window"] < 0.01 and 0.01 < result.data["short"] < 0.05
    assert result.data["latest"] == pytest.approx(0.2, rel=0.05)
    assert result.data["latest_s"] == 60
    assert len(result.data["latest_band"]) == 30  # its 30 baseline minutes, 0.33% each
    assert "in the last 1 min" in result.summary
    assert verdict == Verdict.SUPPORTS
    alone = {**result.data, "latest": None}
    assert TOOL.check(ToolResult(ToolStatus.SUCCESS, "", alone), "carrier", float(END),
                      float(WINDOW)) == Verdict.INCONCLUSIVE  # fmt: skip


@pytest.mark.parametrize(
    ("band", "verdict"),
    [
        ([0.03] * 30, Verdict.SUPPORTS),  # steady: 8% is far out
        ([0.02, 0.09, 0.03, 0.1, 0.01, 0.08] * 5, Verdict.INCONCLUSIVE),  # it often read 8%
        ([0.03, 0.03], Verdict.INCONCLUSIVE),  # two readings: no band
    ],
)
def test_the_last_minute_supports_only_beyond_the_baselines_own_minutes(
    band: list[float], verdict: Verdict
) -> None:
    """8% errors in the last minute against a 3% baseline doubles it, but a service whose
    minutes wander that far shows no fault in one of them."""
    data = {"signal": "error_rate", "window": 0.03, "baseline": 0.03, "short": 0.03,
            "short_s": 300.0, "latest": 0.08, "latest_s": 60.0, "latest_band": band,
            "window_s": 1800.0}  # fmt: skip
    result = ToolResult(ToolStatus.SUCCESS, "", data)
    assert TOOL.check(result, "payment", float(END), float(WINDOW)) == verdict


@pytest.mark.parametrize(
    ("long", "short", "verdict"),
    [
        (0.002, 0.002, Verdict.REFUTES),  # both healthy
        (0.002, 0.009, Verdict.INCONCLUSIVE),  # the last minutes moved: no refutation
        (0.002, 0.06, Verdict.SUPPORTS),  # the last minutes saw it
        (0.06, 0.002, Verdict.SUPPORTS),  # the long window saw it
    ],
)
def test_both_windows_must_refute_either_supports(
    long: float, short: float, verdict: Verdict
) -> None:
    data = {"signal": "error_rate", "window": long, "baseline": 0.002, "short": short,
            "short_s": 300.0, "window_s": 1800.0}  # fmt: skip
    result = ToolResult(ToolStatus.SUCCESS, "", data)
    assert TOOL.check(result, "payment", float(END), float(WINDOW)) == verdict


def test_restarts_in_the_short_window_are_weighed_by_its_length() -> None:
    """Two restarts in 5 minutes against three in the 30-minute baseline is a faster pace;
    one in 5 minutes against nine is not."""

    def check(short: float, baseline: float) -> Verdict:
        data = {"signal": "restarts", "window": 0.0, "baseline": baseline, "short": short,
                "short_s": 300.0, "window_s": 1800.0}  # fmt: skip
        return TOOL.check(ToolResult(ToolStatus.SUCCESS, "", data), "payment", float(END), 1800.0)

    assert check(2.0, 3.0) == Verdict.SUPPORTS
    assert check(1.0, 9.0) == Verdict.INCONCLUSIVE


def test_past_a_gap_the_plans_baseline_is_the_comparison(promurl: str) -> None:
    """The 10 minutes before the last 10 hold no samples; the plan's baseline (its first 10
    minutes, where the read path moved it) does, and the verdict rests on that rise."""
    short = 600.0
    alone = ToolContext(prometheus_url=promurl, at=float(END), window_s=short)
    result = call_tool(TOOL, alone, {"service": "orders", "signal": "error_rate"})
    assert result.data["window"] == pytest.approx(0.2, rel=1e-6)
    assert result.data["baseline"] is None and "baseline_window" not in result.data
    planned = Plan(anchor="frontend", candidates=[], baseline=(START, START + short))
    ctx = dataclasses.replace(alone, plan=planned)
    result = call_tool(TOOL, ctx, {"service": "orders", "signal": "error_rate"})
    assert result.status == ToolStatus.SUCCESS, result.summary
    assert result.data["baseline"] == pytest.approx(0.01, rel=1e-6)
    assert result.data["baseline_window"] == [START, START + short]
    assert "vs the plan's baseline, 0.7 h earlier" in result.summary
    assert TOOL.check(result, "orders", float(END), short) == Verdict.SUPPORTS
    sink = EvidenceSink()
    _, ev = run_check(TOOL, {"service": "orders", "signal": "error_rate"}, ctx, sink)
    assert ev is not None and ev.baseline == (START, START + short)
    with_data = call_tool(TOOL, ctx, {"service": "payment", "signal": "error_rate"})
    assert "baseline_window" not in with_data.data  # its own span before had data


def test_where_its_baseline_holds_too_few_minutes_the_plans_gives_the_band(promurl: str) -> None:
    """The recording begins just before the long window (a replayed case, a new service):
    the agent's baseline holds no minute to tell how far one wanders, so the last minute's
    20% errors (under 1% over the hour) judge nothing alone. The plan's baseline holds 25
    of them: beyond their band, the last minute supports."""
    long = float(STEP * POINTS) - 60.0
    alone = ToolContext(prometheus_url=promurl, at=float(END), window_s=long)
    result = call_tool(TOOL, alone, {"service": "carrier", "signal": "error_rate"})
    assert result.data["latest"] == pytest.approx(0.2, rel=0.05)
    assert len(result.data["latest_band"]) < MIN_POINTS
    assert TOOL.check(result, "carrier", float(END), long) == Verdict.INCONCLUSIVE
    planned = Plan(anchor="frontend", candidates=[], baseline=(START, START + STEP * 100))
    ctx = dataclasses.replace(alone, plan=planned)
    result = call_tool(TOOL, ctx, {"service": "carrier", "signal": "error_rate"})
    assert result.data["latest_band_window"] == [START, START + STEP * 100]
    assert len(result.data["latest_band"]) == 25  # its first 25 minutes
    assert TOOL.check(result, "carrier", float(END), long) == Verdict.SUPPORTS


def test_inside_the_long_window_the_plans_baseline_judges_the_last_minutes(promurl: str) -> None:
    """The recording begins inside the long window (a replayed case, a new service): nothing
    before it to compare, and a level of cores says nothing alone. The plan's baseline lies
    inside the window, ending before the last 5 minutes: against it their cores rose five
    times, and the check supports, saying so."""
    whole = float(STEP * POINTS)  # the long window holds all the data; nothing before it
    alone = ToolContext(prometheus_url=promurl, at=float(END), window_s=whole)
    cpu = call_tool(TOOL, alone, {"service": "payment", "signal": "cpu"})
    assert cpu.data["baseline"] is None and "inner_baseline" not in cpu.data
    assert TOOL.check(cpu, "payment", float(END), whole) == Verdict.INCONCLUSIVE
    planned = Plan(anchor="frontend", candidates=[], baseline=(START, START + STEP * 100))
    ctx = dataclasses.replace(alone, plan=planned)
    cpu = call_tool(TOOL, ctx, {"service": "payment", "signal": "cpu"})
    assert cpu.data["inner_baseline"] == pytest.approx(CORES[False], rel=1e-6)
    assert cpu.data["short"] == pytest.approx(CORES[True], rel=1e-6)
    assert "the plan's baseline before them 0.1 cores" in cpu.summary
    assert TOOL.check(cpu, "payment", float(END), whole) == Verdict.SUPPORTS
    errors = call_tool(TOOL, ctx, {"service": "payment", "signal": "error_rate"})
    assert "inner_baseline" not in errors.data  # a ratio or a p95 has levels of its own


def test_cpu_that_rose_supports_and_steady_memory_says_nothing(promurl: str) -> None:
    cpu, verdict = measure(promurl, "payment", "cpu")
    assert cpu.data["window"] == pytest.approx(0.5, rel=1e-6)
    assert cpu.data["baseline"] == pytest.approx(0.1, rel=1e-6)
    assert verdict == Verdict.SUPPORTS and "cpu 0.5 cores" in cpu.summary
    memory, verdict = measure(promurl, "payment", "memory")
    assert memory.data["window"] == memory.data["baseline"] == MEMORY
    assert verdict == Verdict.INCONCLUSIVE and "768 MiB" in memory.summary  # never refutes


def test_the_installations_metric_names_and_pod_pattern_are_read(promurl: str) -> None:
    """The agent reads what the read path reads (`telemetry_metric_*`,
    `metrics_pod_pattern`), not Tempo's default names; and a pod is a service's by the pod
    pattern, so payment's CPU leaves out payment-db's pod."""
    errors, verdict = measure(promurl, "payment", "error_rate", MESH)
    assert "mesh_request_failed_total" in errors.data["query"]
    assert errors.data["window"] == pytest.approx(0.2, rel=1e-6) and verdict == Verdict.SUPPORTS
    latency, _ = measure(promurl, "payment", "latency_p95", MESH)
    assert latency.data["window"] == pytest.approx(SERIES["payment"][1].p95(), rel=1e-6)
    cpu, verdict = measure(promurl, "payment", "cpu", MESH)
    assert cpu.data["window"] == pytest.approx(0.5, rel=1e-6) and verdict == Verdict.SUPPORTS
    gone, verdict = measure(promurl, "inventory", "latency_p95", MESH)  # not under MESH
    assert gone.status == ToolStatus.NO_DATA and verdict == Verdict.INCONCLUSIVE


def test_a_histogram_in_milliseconds_is_judged_in_seconds(promurl: str) -> None:
    """`telemetry_latency_unit_s`: the checks' thresholds are seconds, whatever the unit
    recorded (read as seconds, 150 ms would be a p95 of 150 s); callees' too."""
    ms = PromQLNames(requests="ms_request_total", failed="ms_request_failed_total",
                     server_seconds="ms_request_duration")  # fmt: skip
    ctx = ToolContext(prometheus_url=promurl, at=float(END), window_s=float(WINDOW),
                      promql=ms, latency_unit_s=0.001)  # fmt: skip
    result = call_tool(TOOL, ctx, {"service": "inventory", "signal": "latency_p95"})
    seconds, _ = measure(promurl, "inventory", "latency_p95")
    assert result.data["window"] == pytest.approx(seconds.data["window"], rel=1e-6)
    assert result.data["baseline"] == pytest.approx(seconds.data["baseline"], rel=1e-6)
    assert "* 0.001" in result.data["query"]
    assert TOOL.check(result, "inventory", float(END), float(WINDOW)) == Verdict.SUPPORTS
    front = call_tool(TOOL, ctx, {"service": "frontend", "signal": "latency_p95"})
    calls = {c["server"]: c["window"] for c in front.data["callees"]}
    assert calls["inventory"] == pytest.approx(seconds.data["window"], rel=1e-6)


def test_a_kind_the_installation_replaced_is_read_as_replaced(promurl: str) -> None:
    """`telemetry_extra_promql` replaces a read-path kind for the agent too; an empty one
    switches the signal off (no data, said why), as it does the probe."""
    errors = ("sum(rate(mesh_request_failed_total{server=<<service>>}[<<window>>]))"
              " / sum(rate(mesh_request_total{server=<<service>>}[<<window>>]))")  # fmt: skip
    ctx = ToolContext(prometheus_url=promurl, at=float(END), window_s=float(WINDOW),
                      promql_templates={"errors": errors, "cpu": ""})  # fmt: skip
    result = call_tool(TOOL, ctx, {"service": "payment", "signal": "error_rate"})
    assert "mesh_request_failed_total" in result.data["query"]
    assert result.data["window"] == pytest.approx(0.2, rel=1e-6)
    off = call_tool(TOOL, ctx, {"service": "payment", "signal": "cpu"})
    assert off.status == ToolStatus.NO_DATA and "switched off" in off.summary
    latency = call_tool(TOOL, ctx, {"service": "payment", "signal": "latency_p95"})
    assert latency.status == ToolStatus.SUCCESS  # not replaced: the built-in template


def test_memory_reads_the_installations_memory_kind_where_it_replaced_it(promurl: str) -> None:
    """The agent's own mean over the window stands in for the read path's `memory` kind only
    while the installation keeps that kind's template: a replacement reaches the agent too."""
    doubled = "2 * sum(container_memory_working_set_bytes{pod=~<<pods>>})"
    ctx = ToolContext(prometheus_url=promurl, at=float(END), window_s=float(WINDOW),
                      promql_templates={"memory": doubled})  # fmt: skip
    result = call_tool(TOOL, ctx, {"service": "payment", "signal": "memory"})
    assert "avg_over_time" not in result.data["query"]
    assert result.data["window"] == result.data["baseline"] == 2 * MEMORY
    own, _ = measure(promurl, "payment", "memory")
    assert "avg_over_time" in own.data["query"] and own.data["window"] == MEMORY
    off = ToolContext(prometheus_url=promurl, at=float(END), promql_templates={"memory": " "})
    gone = call_tool(TOOL, off, {"service": "payment", "signal": "memory"})
    assert gone.status == ToolStatus.NO_DATA and "'memory' is empty" in gone.summary


def test_settings_name_the_agents_metrics(store: GraphStore) -> None:
    """What `serve` gives the agent's tools."""
    settings = load_settings(None, telemetry_metric_requests="mesh_request_total",
                             metrics_pod_pattern="<<service>>-pod-[0-9]+",
                             telemetry_extra_promql={"cpu": ""})  # fmt: skip
    alert = Alert({"alertname": "HighErrorRate", "service": "payment"})
    ctx = context_from(settings, store)(alert, Plan(anchor="payment", candidates=[]))
    assert ctx.promql == PromQLNames.from_settings(settings)
    assert ctx.promql.requests == "mesh_request_total"
    assert ctx.latency_unit_s == settings.telemetry_latency_unit_s
    assert ctx.promql_templates == {"cpu": ""}


def test_an_unknown_service_is_no_data_and_inconclusive(promurl: str) -> None:
    result, verdict = measure(promurl, "cart", "error_rate")
    assert result.status == ToolStatus.NO_DATA and verdict == Verdict.INCONCLUSIVE


def test_the_model_cannot_choose_the_server_or_the_query(promurl: str) -> None:
    ctx = ToolContext(prometheus_url=promurl, at=float(END))
    for extra in ({"url": "http://evil:9090"}, {"host": "evil"}, {"query": "up"}):
        result = call_tool(TOOL, ctx, {"service": "payment", "signal": "error_rate", **extra})
        assert result.status == ToolStatus.INVALID_ARGUMENTS
        assert "unknown argument" in result.summary
    bad = call_tool(TOOL, ctx, {"service": 'x"}) or vector(1', "signal": "error_rate"})
    assert bad.status == ToolStatus.INVALID_ARGUMENTS
    assert call_tool(TOOL, ctx, {"service": "x", "signal": "up"}).status == (
        ToolStatus.INVALID_ARGUMENTS
    )


def test_prometheus_down_is_a_result_not_an_exception() -> None:
    with serve_json(lambda path, query: (200, {})) as url:
        pass  # the port is closed again: nothing listens there
    result, verdict = measure(url, "payment", "error_rate")
    assert result.status == ToolStatus.UNAVAILABLE and "unreachable" in result.summary
    assert verdict == Verdict.INCONCLUSIVE


def test_prometheus_500_is_an_error_result_with_its_message() -> None:
    error = {"status": "error", "errorType": "internal", "error": "query processing failed"}
    seen: list[str] = []

    def answer(path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        seen.append(path)
        return 500, error

    with serve_json(answer) as url:
        result, verdict = measure(url, "payment", "error_rate")
    assert seen == ["/api/v1/query_range"]
    assert result.status == ToolStatus.ERROR
    assert "HTTP 500: query processing failed" in result.summary
    assert verdict == Verdict.INCONCLUSIVE


def test_a_hung_prometheus_times_out_as_a_result() -> None:
    release = threading.Event()

    def hang(path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        release.wait(30)
        return 200, {"status": "success", "data": {"resultType": "matrix", "result": []}}

    quick = dataclasses.replace(TOOL, timeout_s=0.2)
    with serve_json(hang) as url:
        result = call_tool(quick, ToolContext(prometheus_url=url, at=float(END)),
                           {"service": "payment", "signal": "error_rate"})  # fmt: skip
        release.set()
    assert result.status == ToolStatus.TIMEOUT
    assert quick.check(result, "payment", float(END), 1800.0) == Verdict.INCONCLUSIVE


def test_a_healthy_reading_refutes_only_a_release_it_could_see(
    promurl: str, tmp_path: Path
) -> None:
    """checkout reads healthy up to the alert. Released 30 s before it, the healthy minute
    was taken of the version before: no refutation, and the release alone supports it (as
    a stored incident too). Released 10 min before, the same reading refutes it, as it
    refutes a deploy on a healthy service."""
    for ago, state in ((30.0, HypothesisState.SUPPORTED), (600.0, HypothesisState.REFUTED)):
        repo = tmp_path / f"released-{ago:.0f}s"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        (repo / "main.py").write_text("TIMEOUT = 2\n")
        git(repo, "add", ".")
        git(repo, "commit", "-qm", "initial import", when=END - 86400 * 10)
        (repo / "main.py").write_text("TIMEOUT = 10\n")
        git(repo, "commit", "-qam", "raise the timeout", when=END - ago)
        ctx = ToolContext(prometheus_url=promurl, repos={"checkout": repo}, at=float(END),
                          window_s=float(WINDOW))  # fmt: skip
        sink = EvidenceSink()
        _, change = run_check(default_tools()["git_log"], {"service": "checkout"}, ctx, sink)
        assert change is not None and change.verdict == Verdict.SUPPORTS
        assert change.changed_at == END - ago
        _, healthy = run_check(TOOL, {"service": "checkout", "signal": "error_rate"}, ctx, sink)
        assert healthy is not None and healthy.verdict == Verdict.REFUTES
        assert healthy.resolution_s == ctx.rate_window_s
        assert sink.hypotheses["checkout"].state == state
        # the report says which reading judged nothing, and why
        notes = build_report(Alert({"service": "checkout"}), sink, "concluded", None).notes
        too_soon = [n for n in notes if "too soon to show it" in n]
        assert len(too_soon) == (1 if ago < 180 else 0), notes
        assert not too_soon or "read checkout healthy 30 s after its change" in too_soon[0]
        run = AgentRun(Ending.INSUFFICIENT_EVIDENCE, None, sink, Report([], "", [], ""))
        stored = run_from(json.loads(json.dumps(run_doc(run)))).sink.hypotheses["checkout"]
        assert stored.evidence == sink.hypotheses["checkout"].evidence
        assert stored.state == state
