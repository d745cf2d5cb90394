"""Storms become incidents: when two alerts are one incident.

A storm is mostly one cause seen by many alerts, and Alertmanager's `group_by` hands
over groups, not causes. So, within `api_correlation_window_s` of an incident's arrival:

1. at intake, a firing alert joins the open incident of its symptom service
   (`incidents.lua`, `open_for`): no plan is needed, so a storm on one service costs
   one investigation;
2. once an incident is planned, it joins an open incident of the window whose plan has
   the same top candidate, or whose path to its top candidate holds this incident's
   anchor, or the other way round (`incidents.lua`, `correlate`): checkout and frontend
   both failing because of payment are one incident.

The investigation runs once per incident; the incident lists its alerts and what joined
it, with the reason. A plan without candidates (an unknown service) joins only by its
symptom. A window of 0 turns grouping off (each alert fingerprint its own incident).
"""

from __future__ import annotations

from dataclasses import dataclass

from stackgraph.rca.model import Plan


@dataclass(frozen=True)
class CorrelationKey:
    """What a planned incident is matched on."""

    anchor: str
    """The service the plan is about ('' when none was found)."""
    top: str
    """The top candidate ('' when the plan has none)."""
    path: tuple[str, ...]
    """The plan's path from the anchor to the top candidate."""

    @classmethod
    def of(cls, plan: Plan) -> CorrelationKey:
        anchor = plan.anchor or ""
        if not plan.candidates:
            return cls(anchor, "", (anchor,) if anchor else ())
        top = plan.candidates[0]
        paths = [tuple(str(s) for s in p) for p in top.paths if p]
        path = min(paths, key=len) if paths else tuple(x for x in (anchor, top.service) if x)
        return cls(anchor, top.service, path)
