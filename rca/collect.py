"""Candidate generators: the only parts of the read path that read the store (read-only).

Each generator is `(store, request, facts) -> facts`: it adds what it found and notes
what it could not find. Queries are the `rca_*` templates in `cypher/`; values bind as
parameters, hop counts pick one template from the clamped set 1..4.
"""

from __future__ import annotations

from collections.abc import Callable

from stackgraph.store import GraphReader

from .change_history import changes, history
from .facts import Facts, Request
from .neighbourhood import callers, khop, unlinked
from .read_time import logs, probes, traces

Generator = Callable[[GraphReader, Request, Facts], Facts]

GENERATORS: dict[str, Generator] = {
    "khop": khop,
    "callers": callers,
    "unlinked": unlinked,
    "changes": changes,
    "history": history,
    "probes": probes,
    "logs": logs,
    "traces": traces,
}
"""Named generators a playbook may list, in the order it lists them."""
