"""From an alert's labels to the names a Service may go by, best guess first.

Alertmanager labels name the symptom in many ways: `service`, `app`, `job`, a pod name
with its ReplicaSet and pod hashes, a Deployment. `anchor_names` is pure: it only turns
labels into an ordered list of names; `resolve_anchor` asks the graph which of them exist.
"""

from __future__ import annotations

from collections.abc import Mapping

from stackgraph import cypher
from stackgraph.podnames import pod_base_names
from stackgraph.store import GraphReader
from stackgraph.timetravel import at_params

from .facts import NodeFact
from .model import Alert
from .rows import node_fact

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


def resolve_anchor(
    store: GraphReader, alert: Alert, at: float | None = None
) -> tuple[NodeFact | None, str]:
    """The Service the alert fired on (in the graph as it was at `at`; None: now), or None
    with the reason. Label priority: service > app > job > pod (hash suffixes dropped) >
    a Deployment of that name."""
    names = anchor_names(alert.labels)
    if not names:
        return None, "the alert names no service (labels service/app/job/pod are all absent)"
    when = at_params(at)
    rows = store.read(
        cypher.load("rca_anchor_services"), {"names": names, "limit": len(names), **when}
    )
    found = {str(r["name"]): r for r in rows}
    for name in names:
        if name in found:
            return node_fact(name, found[name], position="anchor"), ""
    rows = store.read(cypher.load("rca_anchor_deployments"), {"names": names, "limit": 10, **when})
    services = sorted({str(r["service"]) for r in rows if r.get("service")})
    if services:
        again = store.read(
            cypher.load("rca_anchor_services"), {"names": services, "limit": 10, **when}
        )
        if again:
            return node_fact(str(again[0]["name"]), again[0], position="anchor"), ""
    return None, f"no Service or Deployment in the graph matches {names[:4]!r}"
