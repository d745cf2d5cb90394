"""The offline embedder is a real model: meaning decides similarity, not shared words."""

from __future__ import annotations

import numpy as np

from stackgraph.memory import offline_embedder


def test_offline_embedder_ranks_by_meaning() -> None:
    e = offline_embedder()
    assert e.dim == 384
    v = e.embed(
        [
            "checkout p99 latency spike",
            "payment requests became slow at checkout",
            "the cat sat on the mat",
        ]
    )
    assert v.shape == (3, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    sims = v @ v.T
    assert sims[0, 1] > 0.5 > 0.1 > sims[0, 2]
    again = e.embed(["checkout p99 latency spike"])
    assert np.allclose(again[0], v[0], atol=1e-5)
    assert e.embed([]).shape == (0, 384)
