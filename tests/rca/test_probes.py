"""The plan's metrics probes (`read_time.probes`): the candidates after the first are
probed side by side, and the plan is the same whatever order their answers come in."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from test_investigate import T0, Series, build, names, shop

from stackgraph.rca import Alert, investigate
from stackgraph.store import GraphStore


class Together(Series):
    """After the first candidate's, answers only two candidates asking at the same time
    (a barrier): probed one at a time, the second waits for a partner that never comes,
    the barrier breaks and the probes fail. The shop's four others make two pairs."""

    def __init__(self, alert: dict[str, float]) -> None:
        super().__init__(alert)
        self.barrier = threading.Barrier(2, timeout=10)
        self.asked: list[str] = []
        self.lock = threading.Lock()

    def kinds(self, service: str, start: float, end: float) -> Sequence[str]:
        with self.lock:
            self.asked.append(service)
            first = len(self.asked) == 1
        if not first:
            self.barrier.wait()
        return super().kinds(service, start, end)


def test_candidates_are_probed_side_by_side_and_the_plan_does_not_depend_on_it(
    store: GraphStore,
) -> None:
    build(store, shop())
    alert = Alert({"service": "frontend"}, starts_at=T0)
    together_source = Together({"payment": 9.0})
    together = investigate(store, alert, at=T0 + 600, metrics=together_source)
    assert not [n for n in together.notes if "probe" in n], together.notes
    assert len(together_source.asked) == 5  # every candidate, each once
    alone = investigate(store, alert, at=T0 + 600, metrics=Series({"payment": 9.0}))
    assert names(together) == names(alone) and names(together)[0] == "payment"
    assert [c.score for c in together.candidates] == [c.score for c in alone.candidates]
