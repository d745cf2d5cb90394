"""The StackGraph schema (DESIGN.md): labels, natural keys, edge types and their ends."""

from __future__ import annotations

from .model import EdgeSpec, LabelSpec

CRITICALITY = ("low", "medium", "high", "critical")
HYPOTHESIS_STATES = ("Candidate", "Supported", "Refuted", "Validated")
VERDICTS = ("supports", "refutes", "inconclusive")
MEMORY_ENTITY_TYPES = (
    "service", "datastore", "external_api", "subject", "node", "namespace",
    "change", "deploy", "error", "alert", "action",
)  # fmt: skip
"""What a MemoryEntity may be; the first six REFER_TO the world-model node of that name."""

LABELS: dict[str, LabelSpec] = {
    spec.name: spec
    for spec in (
        LabelSpec(
            "Service",
            ("name",),
            enums={"criticality": CRITICALITY},
            description="A deployable unit that serves or calls others.",
            indexed=("namespace",),
        ),
        LabelSpec("Endpoint", ("service", "method", "route"), description="An HTTP route."),
        LabelSpec("NatsSubject", ("subject",), description="A NATS subject."),
        LabelSpec("CodeUnit", ("repo", "path"), description="A structure-defining source file."),
        LabelSpec("Datastore", ("name",), description="A database, cache or broker."),
        LabelSpec("ExternalApi", ("name",), description="A dependency outside the platform."),
        LabelSpec("Deployment", ("namespace", "name"), description="A Kubernetes workload."),
        LabelSpec("Node", ("name",), description="A Kubernetes node."),
        LabelSpec("Namespace", ("name",), description="A Kubernetes namespace."),
        LabelSpec("Route", ("host", "path"), description="An ingress route (host + path)."),
        LabelSpec("Alert", ("fingerprint",), description="An Alertmanager alert."),
        LabelSpec("Incident", ("fingerprint",), description="An investigated incident."),
        LabelSpec(
            "Deploy",
            ("service", "image_digest", "deployed_at"),
            description="A rollout of a service.",
        ),
        LabelSpec("Change", ("repo", "commit_sha"), description="A commit or merged PR."),
        LabelSpec(
            "Repository",
            ("name",),
            description="A Git repository; carries the change lane's watermark (last head read).",
        ),
        LabelSpec(
            "Hypothesis",
            ("incident_fingerprint", "suspect_ref"),
            required=("state",),
            enums={"state": HYPOTHESIS_STATES},
            description="A candidate root cause of an incident.",
        ),
        LabelSpec(
            "Repair",
            ("signature", "stage", "patch"),
            description="A stage repair that paid on an alert signature (audit repair memory).",
        ),
        LabelSpec(
            "Program",
            ("digest",),
            description="An investigation program (E4): its bindings as JSON, name and origin.",
        ),
        LabelSpec(
            "Operator",
            ("name",),
            description="A synthesised operator admitted to the program library: its code, "
            "parameters, uses and admission evidence.",
        ),
        LabelSpec(
            "Trajectory",
            ("fingerprint",),
            description="One investigation as data (alert, plan, tool calls, stages, "
            "conclusion, cost) and its feedback label: what evolution learns from.",
        ),
        LabelSpec(
            "KnowledgeVersion",
            ("version",),
            description="One version of the layered knowledge K0-K3 with the proposal and "
            "gate results that made it.",
        ),
        LabelSpec(
            "Knowledge",
            ("name",),
            description="Which knowledge version is live.",
        ),
        LabelSpec(
            "MemoryEpisode",
            ("incident_fingerprint", "version"),
            fulltext=("text",),
            vector=("embedding",),
            description="One version of what happened in an incident, bi-temporal.",
        ),
        LabelSpec(
            "MemoryEntity",
            ("entity_type", "entity_ref"),
            description="A deduplicated thing episodes talk about.",
        ),
    )
}

_TOPOLOGY = ("Service", "Datastore", "ExternalApi")
_ANY = tuple(LABELS)

EDGES: dict[str, EdgeSpec] = {
    spec.name: spec
    for spec in (
        EdgeSpec("EXPOSES", ("Service",), ("Endpoint",)),
        EdgeSpec("PUBLISHES_TO", ("Service", "CodeUnit"), ("NatsSubject",)),
        EdgeSpec("CONSUMES_FROM", ("Service", "CodeUnit"), ("NatsSubject",)),
        EdgeSpec("DECLARES_SUBJECT", ("CodeUnit",), ("NatsSubject",)),
        EdgeSpec(
            "CALLS",
            ("Service", "Endpoint", "CodeUnit"),
            ("Service", "Endpoint", "ExternalApi", "Datastore"),
            description="trace_count, error_rate, latency_p95_ms",
        ),
        EdgeSpec("READS_FROM", ("Service", "CodeUnit"), ("Datastore",)),
        EdgeSpec("IMPLEMENTS", ("CodeUnit",), ("Service",)),
        EdgeSpec("DEFINED_IN", ("Endpoint",), ("CodeUnit",)),
        EdgeSpec("DEPLOYED_AS", ("Service", "Datastore"), ("Deployment",)),
        EdgeSpec("RUNS_ON", ("Deployment",), ("Node",)),
        EdgeSpec("IN_NAMESPACE", ("Service", "Deployment", "Datastore", "Route"), ("Namespace",)),
        EdgeSpec("ROUTES_TO", ("Route",), ("Service",)),
        EdgeSpec("DEPLOYED", ("Deploy",), ("Service", "Datastore")),
        EdgeSpec("CHANGED", ("Change", "Deploy"), ("CodeUnit", "Service", "Change")),
        EdgeSpec("FIRED_ON", ("Alert",), _TOPOLOGY),
        EdgeSpec("AFFECTS", ("Incident", "Alert"), _TOPOLOGY),
        EdgeSpec("EVALUATED_AS", ("Incident",), ("Hypothesis",)),
        EdgeSpec(
            "EVIDENCED_BY",
            ("Hypothesis",),
            _ANY,
            required=("tool", "verdict", "result_summary"),
            keys=("tool", "check"),
        ),
        EdgeSpec("ROOT_CAUSED_BY", ("Incident",), _ANY),
        EdgeSpec("CITES", ("Hypothesis", "Incident"), ("Change", "Deploy")),
        EdgeSpec("MENTIONS", ("MemoryEpisode",), ("MemoryEntity",)),
        EdgeSpec("RESOLVED_BY", ("MemoryEpisode",), ("MemoryEntity", "Change", "Deploy")),
        EdgeSpec("SUPERSEDES", ("MemoryEpisode",), ("MemoryEpisode",)),
        EdgeSpec("REFERS_TO", ("MemoryEntity",), _ANY, description="entity -> world-model node"),
        EdgeSpec("TRIGGERED", ("Alert",), ("Incident",)),
        EdgeSpec("REPAIRED_BY", ("Incident",), ("Repair",), description="gain"),
        EdgeSpec("PLANNED_WITH", ("Incident",), ("Program",), description="the plan's program"),
        EdgeSpec("TRACED_AS", ("Incident",), ("Trajectory",), description="its trajectory"),
    )
}
