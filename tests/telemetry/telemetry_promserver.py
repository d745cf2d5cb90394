"""A real Prometheus (Debian's) holding generated Tempo service-graph series, per session.

The generator writes OpenMetrics (family names in TYPE lines, seconds timestamps, ascending
samples, `# EOF`); `stackgraph.eval.promserver` backfills it with promtool and serves it.
Counts are exact integers per step, so the expected rates, error ratios and the histogram
quantile (with Prometheus' linear interpolation) can be computed here and compared.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from sgtest import require

from stackgraph.eval.promserver import free_port as free_port
from stackgraph.eval.promserver import running_prometheus as serve

START = 1_767_225_600  # 2026-01-01T00:00:00Z
STEP = 15
POINTS = 240  # one hour
END = START + STEP * (POINTS - 1)
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


@dataclass(frozen=True)
class Pair:
    """One generated client→server series set: constant rate, error ratio, exp. latency."""

    client: str
    server: str
    rps: float
    error_ratio: float
    mean_s: float
    connection_type: str = ""
    virtual_node: str = ""
    subject: str = ""
    until: int = POINTS
    """Number of points written (the pair stops sending after that)."""

    def labels(self) -> str:
        parts = [
            f'client="{self.client}"',
            f'server="{self.server}"',
            f'connection_type="{self.connection_type}"',
        ]
        if self.virtual_node:
            parts.append(f'virtual_node="{self.virtual_node}"')
        if self.subject:
            parts.append(f'messaging_destination_name="{self.subject}"')
        return ",".join(parts)

    def cdf(self, le: float) -> float:
        return 1.0 - math.exp(-le / self.mean_s)

    def count_at(self, t: int) -> int:
        """Requests counted up to sample time t (the generator's integer cumulative count)."""
        return round(self.rps * STEP * ((t - START) // STEP + 1))

    def bucket_at(self, t: int, le: float) -> int:
        return round(self.count_at(t) * self.cdf(le))

    def expected_p95_s(self, start: int, end: int) -> float:
        """histogram_quantile(0.95) over the bucket increases between two sample times,
        interpolated linearly inside the bucket as Prometheus does."""
        total = self.count_at(end) - self.count_at(start)
        rank = 0.95 * total
        lower, below = 0.0, 0
        for le in BUCKETS:
            upto = self.bucket_at(end, le) - self.bucket_at(start, le)
            if upto >= rank:
                return lower + (le - lower) * (rank - below) / (upto - below)
            lower, below = le, upto
        return BUCKETS[-1]

    def true_p95_s(self) -> float:
        return -self.mean_s * math.log(0.05)


PAIRS = (
    Pair("frontend", "checkout", 20, 0.02, 0.08),
    Pair("checkout", "payment", 10, 0.10, 0.4),
    Pair("checkout", "orders-db", 5, 0.0, 0.01, connection_type="database"),
    Pair("user", "frontend", 30, 0.01, 0.1, connection_type="virtual_node", virtual_node="client"),
    Pair("checkout", "api.stripe.com", 2, 0.5, 0.3, "virtual_node", virtual_node="server"),
    Pair("orders", "shipping", 4, 0.0, 0.05, "messaging_system", subject="orders.created"),
    Pair("payment", "ledger", 1, 0.0, 0.02, until=POINTS // 2),
)
CPU = {"payment": 0.5, "checkout": 0.25}
"""container_cpu_usage_seconds_total rates (cores) for the extra-PromQL probe."""


def openmetrics() -> str:
    lines: list[str] = []
    fams = (
        ("traces_service_graph_request", "request_total", lambda p, n: n),
        (
            "traces_service_graph_request_failed",
            "request_failed_total",
            lambda p, n: round(n * p.error_ratio),
        ),
    )
    for family, suffix, value in fams:
        lines.append(f"# TYPE {family} counter")
        for p in PAIRS:
            for i in range(p.until):
                n = round(p.rps * STEP * (i + 1))
                lines.append(
                    f"traces_service_graph_{suffix}{{{p.labels()}}} "
                    f"{float(value(p, n))} {START + i * STEP}"
                )
    hist = "traces_service_graph_request_server_seconds"
    lines.append(f"# TYPE {hist} histogram")
    for p in PAIRS:
        for i in range(p.until):
            t = START + i * STEP
            n = p.count_at(t)
            for le in BUCKETS:
                lines.append(f'{hist}_bucket{{{p.labels()},le="{le}"}} {p.bucket_at(t, le)} {t}')
            lines.append(f'{hist}_bucket{{{p.labels()},le="+Inf"}} {n} {t}')
            lines.append(f"{hist}_sum{{{p.labels()}}} {n * p.mean_s} {t}")
            lines.append(f"{hist}_count{{{p.labels()}}} {n} {t}")
    lines.append("# TYPE container_cpu_usage_seconds counter")
    for container, cores in CPU.items():
        for i in range(POINTS):
            lines.append(
                f'container_cpu_usage_seconds_total{{container="{container}"}} '
                f"{cores * STEP * (i + 1)} {START + i * STEP}"
            )
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class PromServer:
    url: str
    pairs: tuple[Pair, ...] = PAIRS


@contextmanager
def running_prometheus(root: Path, series: str) -> Iterator[str]:
    """`stackgraph.eval.promserver.running_prometheus` over OpenMetrics text; skips (fails
    in CI) without Debian's binaries. Shared by every test folder that needs a Prometheus."""
    require(shutil.which("prometheus") is not None, "Debian prometheus")
    require(shutil.which("promtool") is not None, "Debian promtool")
    path = root / "sg.om"
    path.write_text(series, encoding="utf-8")
    with serve(root, path) as url:
        yield url


@pytest.fixture(scope="session")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PromServer]:
    with running_prometheus(tmp_path_factory.mktemp("prometheus"), openmetrics()) as url:
        yield PromServer(url)
