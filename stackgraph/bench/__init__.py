"""Benchmarks (`make bench`): each module measures one capability as ratios against a
reference run in the same process, and returns a markdown section for BENCHMARKS.md."""

from __future__ import annotations

BENCHES: dict[str, str] = {
    "ingest": "stackgraph.bench.ingest",
    "investigate": "stackgraph.bench.investigate",
    "evidence": "stackgraph.bench.evidence_sources",
    "code_index": "stackgraph.bench.code_index",
    "memory": "stackgraph.bench.memory",
    "infra": "stackgraph.bench.infra",
    "unlinked": "stackgraph.bench.unlinked",
    "probes": "stackgraph.bench.probes",
}
