"""From an alert's labels to the names a Service may go by, best guess first.

Alertmanager labels name the symptom in many ways: `service`, `app`, `job`, a pod name
with its ReplicaSet and pod hashes, a Deployment. This module is pure: it only turns
labels into an ordered list of names; the generator in `collect` asks the graph which
of them exist.
"""

from __future__ import annotations

from collections.abc import Mapping

from stackgraph.podnames import pod_base_names

LABEL_PRIORITY = (
    "service",
    "service_name",
    "app",
    "app_kubernetes_io_name",
    "app.kubernetes.io/name",
    "job",
    "container",
    "deployment",
    "workload",
    "pod",
)
"""Labels that may name the symptom service, most specific first."""

_MAX_NAME = 253


def _job_variants(job: str) -> list[str]:
    """Prometheus jobs are often `namespace/name`; try the last segment too."""
    return [job, job.rsplit("/", 1)[-1]] if "/" in job else [job]


def anchor_names(labels: Mapping[str, str]) -> list[str]:
    """Candidate service names from alert labels, in priority order, without duplicates.

    Values are data: they are returned as strings to bind as query parameters, never
    spliced into query text. Over-long or empty values are dropped.
    """
    names: list[str] = []
    for key in LABEL_PRIORITY:
        value = labels.get(key)
        if not isinstance(value, str) or not value.strip() or len(value) > _MAX_NAME:
            continue
        value = value.strip()
        if key == "job":
            names.extend(_job_variants(value))
        elif key == "pod":
            names.append(value)
            names.extend(pod_base_names(value))
        else:
            names.append(value)
    return list(dict.fromkeys(names))
