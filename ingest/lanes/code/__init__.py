"""The `code` lane: Python services in Git repos → endpoints, subjects, calls, datastores.

    stackgraph ingest --lanes code --repo ./shop          # services from the layout
    repos: [{url: https://git.example/shop.git, branch: main, services: [cart, payment]}]

Extraction is pure (`extract`, `analyse` over (path, text) pairs); `source` is the thin
loader that clones/walks repos. Each CodeUnit's functions, classes and methods are also
embedded into the code index (`stackgraph.memory.code_index`) unless `code_index: false`;
unchanged chunks are not embedded again. The lane only finds the chunks (`collect` hands
them over in `RecordBatch.code_chunks`); the writer stores them after the lane's records,
under its lease (`sync_code_index`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from stackgraph.errors import InputError
from stackgraph.repo_config import RepoSpec
from stackgraph.schema import RecordBatch

from ..registry import LaneInputs, register

if TYPE_CHECKING:
    from stackgraph.ingest.writer import GraphIngestor
from .chunks import CodeChunk, chunk_module, point_id
from .extract import Analysis, Known, analyse, extract
from .source import RepoSnapshot, load_repo

__all__ = [
    "Analysis",
    "CodeChunk",
    "Known",
    "RepoSnapshot",
    "analyse",
    "chunk_module",
    "collect",
    "extract",
    "load_repo",
    "point_id",
    "repo_specs",
    "sync_code_index",
]

log = logging.getLogger(__name__)


def repo_specs(inputs: LaneInputs) -> list[RepoSpec]:
    """`--repo PATH` flags (using the config's entry for the same path), else `repos:`."""
    configured = list(inputs.settings.repos)
    if not inputs.repos:
        if not configured:
            raise InputError("the code lane needs a repo (--repo PATH or `repos:` in the config)")
        return configured
    out: list[RepoSpec] = []
    for path in inputs.repos:
        resolved = path.expanduser().resolve()
        match = [
            s
            for s in configured
            if s.path is not None and s.path.expanduser().resolve() == resolved
        ]
        out.append(match[0] if match else RepoSpec(path=resolved))
    return out


def _known(inputs: LaneInputs, snaps: list[RepoSnapshot]) -> Known:
    services = {svc for snap in snaps for svc in snap.services}
    datastores: set[str] = set()
    catalog_path = inputs.catalog or inputs.settings.catalog
    if catalog_path is not None and catalog_path.is_file():
        from ..catalog import load_catalog

        cat = load_catalog(catalog_path)
        services |= {s.name for s in cat.services}
        datastores |= {d.name for d in cat.datastores}
    return Known(frozenset(services), frozenset(datastores))


def _use_index(inputs: LaneInputs) -> bool:
    return bool(inputs.options.get("code_index", inputs.settings.code_index))


def sync_code_index(
    writer: GraphIngestor, inputs: LaneInputs, batch: RecordBatch
) -> Mapping[str, int]:
    """After-write hook: embed and store the lane's chunks, under the writer's lease."""
    if not batch.code_chunks or not _use_index(inputs):
        return {}
    from stackgraph.memory.code_index import CodeIndex

    hook: Callable[[str, Any], None] | None = inputs.options.get("on_index")
    with CodeIndex.open(inputs.settings) as index:
        for name, chunks in batch.code_chunks.items():
            report = index.sync(name, chunks, guard=writer.check_lease)
            log.info("code index %s: %s", name, report)
            if hook is not None:
                hook(name, report)
    return {}


@register(
    "code",
    "HTTP endpoints, NATS subjects, calls and datastores found in Python repos",
    after_write=sync_code_index,
)
def collect(inputs: LaneInputs) -> RecordBatch:
    settings = inputs.settings
    use_index = _use_index(inputs)
    if use_index:  # an embedder/collection mismatch is refused before any work
        from stackgraph.memory.code_index import CodeIndex

        CodeIndex.check(settings)
    snaps = [load_repo(spec, settings) for spec in repo_specs(inputs)]
    known = _known(inputs, snaps)
    by_repo: dict[str, Analysis] = {}
    for snap in snaps:
        result = by_repo.setdefault(snap.name, Analysis())
        result.batch.problems.extend(snap.problems)
        for service, sf in sorted(snap.services.items()):
            result.extend(
                analyse(sf.files, service, repo=snap.name, known=known, root=sf.root,
                        url_base=snap.url_base)
            )  # fmt: skip
    batch = RecordBatch()
    for name, result in by_repo.items():
        batch.extend(result.batch)
        if use_index:
            batch.code_chunks[name] = list(result.chunks)
    return batch
