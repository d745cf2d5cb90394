"""Which object kinds the Kubernetes lanes understand, and which they pass over on purpose.

An object of a kind in neither set is reported (a typo, or a CRD nobody told us about);
one in `PASSED_OVER` is skipped silently because it has no place in the topology.
"""

from __future__ import annotations

from .k8s_objects import Obj, group_of

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")
INFRA_KINDS = frozenset(
    {*WORKLOAD_KINDS, "Namespace", "Service", "Ingress", "IngressRoute", "IngressRouteTCP",
     "Node", "Pod", "ReplicaSet"}
)  # fmt: skip
FLUX_KINDS = frozenset({"HelmRelease", "Kustomization", "GitRepository"})

_BUILTIN = frozenset(
    {
        "ServiceAccount",
        "ConfigMap",
        "Secret",
        "Endpoints",
        "EndpointSlice",
        "Event",
        "LimitRange",
        "ResourceQuota",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "PodTemplate",
        "ReplicationController",
        "ComponentStatus",
        "Binding",
        "Job",
        "CronJob",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "NetworkPolicy",
        "IngressClass",
        "Role",
        "ClusterRole",
        "RoleBinding",
        "ClusterRoleBinding",
        "StorageClass",
        "VolumeAttachment",
        "CSIDriver",
        "CSINode",
        "CSIStorageCapacity",
        "CustomResourceDefinition",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "PriorityClass",
        "RuntimeClass",
        "Lease",
        "APIService",
        "CertificateSigningRequest",
        "FlowSchema",
        "PriorityLevelConfiguration",
        "ControllerRevision",
        "VerticalPodAutoscaler",
        "Gateway",
        "GatewayClass",
        "HTTPRoute",
        "GRPCRoute",
        "TCPRoute",
        "TLSRoute",
        "UDPRoute",
        "ReferenceGrant",
    }
)
# CRD groups that often sit beside an app's manifests; their objects are not topology
_PASSED_GROUPS = (
    "traefik.io",
    "traefik.containo.us",
    "toolkit.fluxcd.io",
    "monitoring.coreos.com",
    "cert-manager.io",
    "openebs.io",
    "networking.istio.io",
    "security.istio.io",
    "keda.sh",
    "external-secrets.io",
    "bitnami.com",
)


def is_known(obj: Obj) -> bool:
    kind = obj.get("kind")
    if kind in INFRA_KINDS or kind in FLUX_KINDS or kind in _BUILTIN:
        return True
    group = group_of(obj)
    return any(group == g or group.endswith("." + g) for g in _PASSED_GROUPS)
