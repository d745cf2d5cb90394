"""`run_lanes`: collect lanes in order and write each through the single writer. The one
way lanes are run: `stackgraph ingest`, the scheduler, the demo and the replay harness.

    report = run_lanes(store, settings, "infra,telemetry", manifests=Path("dump/"))
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from stackgraph.config import Settings
from stackgraph.errors import InputError, SourceUnavailable, StackGraphError
from stackgraph.schema import RecordBatch
from stackgraph.store import GraphStore

from .lanes import LaneInputs, resolve
from .report import IngestReport
from .writer import Clock, GraphIngestor

log = logging.getLogger(__name__)

Progress = Callable[[str, int], Callable[[int], None]]
"""(lane name, records to write) -> a callback advanced by the records written."""


def run_lanes(
    store: GraphStore,
    settings: Settings,
    lanes: str,
    *,
    catalog: Path | None = None,
    manifests: Path | None = None,
    repos: tuple[Path, ...] = (),
    options: Mapping[str, Any] | None = None,
    clock: Clock = time.time,
    who: str = "ingest",
    progress: Progress | None = None,
) -> tuple[IngestReport, list[StackGraphError]]:
    """Collect the named lanes and write their records, one writer and lease for the run.

    Lanes run in order, each collected then written, so a lane reads (through the read-only
    `graph` port) what the lanes before it wrote. A lane whose source fails (Prometheus
    down, no cluster, a bad file) does not stop the lanes after it; the failures come back
    beside the report, in order. `clock` is the writer's clock (a replay sets it to the
    replayed time, so first_seen/last_seen and Stale cut-offs are those of the replay)."""
    chosen = resolve(lanes)
    report = IngestReport()
    failures: list[StackGraphError] = []
    writer = GraphIngestor(store, settings.batch_size, settings.lease_ttl_s, clock=clock, who=who)
    with writer:
        for lane in chosen:
            inputs = LaneInputs(settings, catalog, manifests, repos, dict(options or {}),
                                graph=store.reader())  # fmt: skip
            try:
                batch: RecordBatch = lane.collect(inputs)
            except (InputError, SourceUnavailable) as exc:
                failures.append(exc)
                continue
            except StackGraphError:
                raise  # the store or the lease: nothing after it could be written either
            except Exception as exc:  # input the lane did not foresee: still one clear line
                log.debug("lane %s failed", lane.name, exc_info=True)
                what = f"{type(exc).__name__}: {exc}"
                failures.append(InputError(f"the {lane.name} lane failed on its input: {what}"))
                continue
            advance = progress(lane.name, len(batch.nodes) + len(batch.edges)) if progress else None
            report.merge(writer.write(batch, advance, tag=lane.name))
            if lane.after_write is not None:
                report.add_stale(lane.after_write(writer, inputs, batch))
    return report, failures
