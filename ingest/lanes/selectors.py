"""Which k8s Services select which workloads, in near-linear time.

Comparing every Service's selector with every workload's pod labels is quadratic within a
namespace (10,240 objects took over two minutes). Instead each Service is filed under one
pair of its selector, the pair fewest pods carry, and a workload only checks the Services
filed under its own label pairs: each Service is checked against at most the pods that
carry its rarest pair, which is about the pods it selects.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

__all__ = ["match_selectors", "selects"]

S = TypeVar("S")
P = TypeVar("P", bound=Hashable)
Labels = Mapping[str, str]


def selects(selector: Labels, pod_labels: Labels) -> bool:
    """A Service's selector selects a pod: non-empty, and every pair is among its labels."""
    return bool(selector) and all(pod_labels.get(k) == v for k, v in selector.items())


def match_selectors(
    services: Sequence[tuple[S, Labels]], pods: Sequence[tuple[P, Labels]]
) -> dict[P, list[S]]:
    """For each pod (template), the Services whose selector selects it, in `services` order."""
    carried = Counter(pair for _, pod_labels in pods for pair in pod_labels.items())
    filed: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, (_, selector) in enumerate(services):
        if not selector:
            continue
        rarest = min(selector.items(), key=lambda pair: (carried.get(pair, 0), pair))
        if carried.get(rarest):
            filed[rarest].append(i)
    out: dict[P, list[S]] = {}
    for key, pod_labels in pods:
        hits = [
            i
            for pair in pod_labels.items()
            for i in filed.get(pair, ())
            if selects(services[i][1], pod_labels)
        ]
        out[key] = [services[i][0] for i in sorted(hits)]
    return out
