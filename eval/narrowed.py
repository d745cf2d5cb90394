"""A dataset read as a platform that records less would hold it: only some of its sources.

The ranking is judged on platforms that record other things than the shared datasets do
(a managed cloud with only latency, requests and availability; no logs; no releases). Keeping
a dataset's sources to such a set (or leaving out the topology it states: a platform whose
calls no tracer sees) measures, on labelled cases, how the plan and the baselines
fare there, every method in the same run on the same narrowed data."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import replace

from .datasets import METRIC_KINDS, USER, Case, DatasetError, MetricSeries

OTHER_SOURCES: Mapping[str, str] = {
    "logs": "log lines",
    "traces": "spans",
    "releases": "deploys and their commits",
}
SOURCES: frozenset[str] = (METRIC_KINDS - {"other"}) | OTHER_SOURCES.keys()
GOLDEN = frozenset({"latency", "errors", "workload"})
"""The golden signals of calls (latency, errors, traffic): what a platform with nothing else
still records, for `--only golden`."""


def sources_from(text: str | None) -> frozenset[str] | None:
    """`latency,errors` or `golden` into the sources kept (None: all of them); an unknown
    name is an error that lists the known ones."""
    if text is None:
        return None
    names = {n.strip() for n in text.split(",") if n.strip()}
    keep = set().union(*(GOLDEN if n == "golden" else {n} for n in names))
    unknown = sorted(keep - SOURCES)
    if unknown or not keep:
        raise DatasetError(
            f"--only {text!r}: unknown source(s) {', '.join(unknown) or '(none given)'}; known: "
            f"golden, {', '.join(sorted(SOURCES))}"
        )
    return frozenset(keep)


def narrowed(cases: list[Case], keep: Collection[str] | None, topology: bool = True) -> list[Case]:
    """Each case with only the sources in `keep` (metric kinds, logs, traces, releases);
    without `topology`, also without the call graph and the manifests the dataset states (the
    graph then holds the calls the metrics measured and the services the cluster lists);
    `cases` as they are where `keep` is None and `topology` is kept."""
    if not topology:
        cases = [
            replace(c, call_edges=(), manifests=None, metrics=tuple(own(c.metrics))) for c in cases
        ]
    if keep is None:
        return cases
    return [
        replace(
            c,
            metrics=tuple(m for m in c.metrics if m.kind in keep),
            logs=c.logs if "logs" in keep else (),
            spans=c.spans if "traces" in keep else (),
            changes=c.changes if "releases" in keep else (),
        )
        for c in cases
    ]


def own(metrics: Iterable[MetricSeries]) -> list[MetricSeries]:
    """Each signal the dataset divided over the callers its call graph states (`spread`)
    once more as the service's own, as a platform with no call graph records it: from
    Tempo's uninstrumented client (`USER`), the request rates summed back. Measured edge
    series and pod signals as they are."""
    out: list[MetricSeries] = []
    merged: dict[tuple[str, str], MetricSeries] = {}
    for m in metrics:
        if not m.spread:
            out.append(m)
            continue
        key = (m.service, m.name)
        seen = merged.get(key)
        if seen is None:
            merged[key] = replace(m, client=USER)
        elif m.name == "requests":
            merged[key] = replace(seen, values=seen.values + m.values)
    return out + list(merged.values())


def left_out(keep: Collection[str] | None, topology: bool = True) -> list[str]:
    """The scorecard's lines saying what every method was given (none where all was)."""
    out = [] if topology else [
        "no topology: the call graph and the manifests the dataset states left out; the graph "
        "holds the calls the metrics measured and the services the cluster lists; a "
        "service's own signals the dataset divided over its stated callers are its own "
        "again; every method read the same"
    ]  # fmt: skip
    if keep is None:
        return out
    left = sorted(SOURCES - set(keep))
    return [
        f"only: {', '.join(sorted(keep))} kept, as a platform recording nothing else "
        f"(left out: {', '.join(left) or 'nothing'}); every method read the same",
        *out,
    ]
