"""Kubernetes pod names back to the workload they belong to: shared by the lanes (span and
log files name pods) and the read path (alert labels do)."""

from __future__ import annotations

import re

__all__ = ["pod_base_names"]

_POD_HASH = re.compile(r"^(?P<base>.+?)-(?P<rs>[a-z0-9]{5,10})-(?P<pod>[a-z0-9]{5})$")
_RS_HASH = re.compile(r"^(?P<base>.+?)-(?P<rs>[a-z0-9]{6,10})$")
_STS_ORDINAL = re.compile(r"^(?P<base>.+?)-\d+$")


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
