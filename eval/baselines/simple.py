"""Reference baselines that need only numpy/scipy: random, largest-anomaly and MicroRCA.

They give the floor any StackGraph RCA result must clear. All are pure functions of a Case
and return every service of the case exactly once, best first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from ..datasets.model import Case, MetricSeries

_ABS_FLOOR = 1e-9


def _seed(case_id: str) -> int:
    """Stable 64-bit seed from the case id (Python's hash() is salted per process)."""
    return int.from_bytes(hashlib.sha256(case_id.encode("utf-8")).digest()[:8], "big")


def rank_random(case: Case) -> list[str]:
    """Deterministic shuffle of the services, seeded by the case id."""
    rng = np.random.default_rng(_seed(case.case_id))
    services = sorted(case.services)
    return [services[i] for i in rng.permutation(len(services))]


def series_score(ms: MetricSeries, case: Case) -> float:
    """Relative change of the mean: |mean(alert) - mean(baseline)| / max(|mean(baseline)|, eps).

    Chosen over a max robust z-score because Nezha's percentile latencies are quantised to
    histogram bucket bounds (flat at 0.005 s with single-minute jumps) and its baselines are
    ~3 points, so a MAD-scaled max explodes on one bucket jump of an idle service; the mean
    over the window damps that. 0.0 when either window has no points.
    """
    base, alert = windowed(ms, case)
    if base.size == 0 or alert.size == 0:
        return 0.0
    mb = float(np.mean(base))
    return abs(float(np.mean(alert)) - mb) / max(abs(mb), _ABS_FLOOR)


def windowed(ms: MetricSeries, case: Case) -> tuple[np.ndarray, np.ndarray]:
    """The series' finite values in the case's baseline and alert windows."""
    bw, aw = case.baseline_window, case.alert_window
    base = ms.values[(ms.times >= bw[0]) & (ms.times < bw[1])]
    alert = ms.values[(ms.times >= aw[0]) & (ms.times < aw[1])]
    return base[np.isfinite(base)], alert[np.isfinite(alert)]


def service_scores(
    case: Case, score: Callable[[MetricSeries, Case], float] = series_score
) -> dict[str, float]:
    """A service's anomaly = max `score` over its metric series (0.0 without metrics)."""
    scores = dict.fromkeys(case.services, 0.0)
    for ms in case.metrics:
        if ms.service in scores:
            scores[ms.service] = max(scores[ms.service], score(ms, case))
    return scores


def _order(services: tuple[str, ...], *keys: dict[str, float]) -> list[str]:
    """Services sorted by keys descending, ties by name (deterministic)."""
    return sorted(services, key=lambda s: (*(-k.get(s, 0.0) for k in keys), s))


def rank_largest_anomaly(case: Case) -> list[str]:
    """Services by their largest metric anomaly."""
    return _order(case.services, service_scores(case))


def rank_microrca(
    case: Case, damping: float = 0.85, backward: float = 0.3, iters: int = 200
) -> list[str]:
    """MicroRCA-style personalised PageRank on the anomaly-weighted call graph.

    Following MicroRCA (Wu et al., NOMS'20), simplified:
    * node anomaly a(s) = log1p(largest-anomaly score) / max, in [0, 1];
    * a call client->server gets forward weight a(server) (the callee's anomaly explains the
      edge's slow/failed responses) and a backward weight ``backward * a(client)`` so the
      walk can also climb back to callers (as in MicroRCA's/MonitorRank's backward edges);
    * personalisation vector proportional to a(s), so anomalous services attract the walk;
    * the score is the stationary probability, ties broken by anomaly then name.
    Falls back to the anomaly ranking when nothing is anomalous.
    """
    services = case.services
    idx = {s: i for i, s in enumerate(services)}
    raw = service_scores(case)
    logs = {s: float(np.log1p(v)) for s, v in raw.items()}
    top = max(logs.values(), default=0.0)
    if top <= 0.0:
        return _order(services, raw)
    anom = np.array([logs[s] / top for s in services])
    rows, cols, vals = [], [], []
    for e in case.call_edges:
        if e.client not in idx or e.server not in idx or e.client == e.server:
            continue
        c, s = idx[e.client], idx[e.server]
        rows += [c, s]
        cols += [s, c]
        vals += [anom[s] + 1e-6, backward * anom[c] + 1e-6]
    n = len(services)
    w = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    out = np.asarray(w.sum(axis=1)).ravel()
    inv = sp.diags(np.divide(1.0, out, out=np.zeros(n), where=out > 0))
    trans = (inv @ w).T.tocsr()  # column-stochastic where a node has out-edges
    pers = anom / anom.sum()
    dangling = out == 0
    pr = np.full(n, 1.0 / n)
    for _ in range(iters):
        new = damping * (trans @ pr + pr[dangling].sum() * pers) + (1 - damping) * pers
        if np.abs(new - pr).sum() < 1e-12:
            pr = new
            break
        pr = new
    score = {s: float(pr[idx[s]]) for s in services}
    return _order(services, score, raw)
