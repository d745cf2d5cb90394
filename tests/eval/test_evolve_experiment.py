"""`stackgraph eval evolve` diagnoses in the world the end-to-end replay builds."""

from __future__ import annotations

import shutil

from sgtest import require

from stackgraph.config import Settings
from stackgraph.eval.evolve_experiment import experiment
from stackgraph.store import GraphStore


def test_the_floor_reads_the_cases_releases_in_git_as_end_to_end(
    settings: Settings, store: GraphStore
) -> None:
    """seeded's shop-02: its root cause was released 10 minutes before the fault. The end
    to end replay Validates it (its release in Git, its metrics); the evolution replay,
    whose floor had no repository, could only Support it. Both arms now read the same
    monorepo: one path for both measurements."""
    require(all(shutil.which(b) for b in ("prometheus", "promtool")), "Debian prometheus")
    require(shutil.which("git") is not None, "git")
    report = experiment("seeded", None, store, settings=settings, every=10, limit=3)
    rows = {r["case_id"]: r for r in report["cases"]}
    assert set(rows) == {"shop-01", "shop-02", "shop-03"}
    for arm in ("off", "on"):
        assert rows["shop-02"][arm]["validated"] and rows["shop-02"][arm]["correct"]
        assert not rows["shop-01"][arm]["validated"]  # no release: one line at most
    assert report["off"]["validated"] == 1 and report["off"]["validated_precision"] == 1.0
