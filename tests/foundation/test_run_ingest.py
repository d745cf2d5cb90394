"""A lane whose source fails does not stop the other lanes of the same run."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from stackgraph.cli.app import run_ingest
from stackgraph.config import Settings
from stackgraph.dump import stats
from stackgraph.errors import SourceUnavailable
from stackgraph.store import GraphStore


def test_failing_lane_reports_and_later_lanes_are_written(
    settings: Settings, store: GraphStore, examples: Path
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    down = settings.model_copy(
        update={"prometheus_url": f"http://127.0.0.1:{port}", "telemetry_timeout_s": 2.0}
    )
    catalog = examples / "platform" / "catalog.yaml"
    with pytest.raises(SourceUnavailable, match=f"127.0.0.1:{port}"):
        run_ingest(down, "telemetry,catalog", catalog=catalog, store=store)
    assert stats(store)["nodes"]["Service"] == 8
