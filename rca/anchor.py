"""From an alert's labels to the names a Service may go by, best guess first.

Alertmanager labels name the symptom in many ways: `service`, `app`, `job`, a pod name
with its ReplicaSet and pod hashes, a Deployment. This module is pure: it only turns
labels into an ordered list of names; the generator in `collect` asks the graph which
of them exist.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

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

_POD_HASH = re.compile(r"^(?P<base>.+?)-(?P<rs>[a-z0-9]{5,10})-(?P<pod>[a-z0-9]{5})$")
_RS_HASH = re.compile(r"^(?P<base>.+?)-(?P<rs>[a-z0-9]{6,10})$")
_STS_ORDINAL = re.compile(r"^(?P<base>.+?)-\d+$")
_MAX_NAME = 253


def pod_base_names(pod: str) -> list[str]:
    """`checkout-7d9f8b7c5d-x2x7z` → [`checkout`]; a StatefulSet `db-0` → [`db`].

    A ReplicaSet hash contains a digit in practice; a word without digits (`payment-api`)
    is kept as it is, so a plain name is never truncated.
    """
    out: list[str] = []
    m = _POD_HASH.match(pod)
    if m and any(ch.isdigit() for ch in m.group("rs") + m.group("pod")):
        out.append(m.group("base"))
    m2 = _RS_HASH.match(pod)
    if m2 and any(ch.isdigit() for ch in m2.group("rs")):
        out.append(m2.group("base"))
    m3 = _STS_ORDINAL.match(pod)
    if m3:
        out.append(m3.group("base"))
    return out


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
