"""Evidence and hypotheses: states and confidence derived from tool verdicts only.

    Candidate ──supports (any tool)──▶ Supported ──2 independent lines, none against──▶ Validated
        └──────refutes (at least as many sources as support, none showing it fail)──▶ Refuted

Independence is counted by data source, not by tool (`DATA_SOURCE`): a line of evidence is
one source among the supporting tools — metrics, logs, Kubernetes, change (Git/Flux).
git_log and git_show read the same commits, so together they are one line. The graph
(`query_stack_graph`) re-reads the world-model the plan was ranked on — the same Tempo
edges and Deploy nodes — so it is no line towards Validated, and neither are past incidents
(`memory_lookup`: a prior, not proof). A graph check that supports makes a hypothesis
Supported; Validated needs two other sources (graph + git_log is Supported, git_log +
prometheus_query is Validated, unless the metrics moved only in the cpu or memory a rollout
moves anyway: `ROLLOUT_FOOTPRINT`). For the same reason the graph and memory decide nothing
once an independent source has judged: their verdicts count only while no other tool's does,
and what they say against after that is an objection, which only keeps it from Validated.

A change is a lead only where its service's health moved after it (`Hypothesis.unmoved`),
as the plan's change scorer holds: a release followed by errors and latency that did not
move, read late enough to show it, is no evidence of this incident.

A reading can only refute a change it could see: a measurement that ends before the
suspect's change had time to show in it (`settled`) is no evidence either way. A release
seconds before the alert, read healthy in the minute before it, is not refuted by that
reading; the same release read healthy five minutes on is.

Confidence counts the same way, by independent sources: Laplace's rule of succession over
those that judged (`Hypothesis.confidence`), so a second tool on a source, the graph and
memory add nothing. Without an independent line it stays within what the plan's prior
alone could give (`PRIOR_WEIGHT`).

A conclusion needs a tool's support (`EvidenceSink.concludable`), and, wherever a source
beyond the graph and memory judged any suspect of the investigation, that source's: the
graph proposes, tools verify. A lead that rests on a change alone must also have been open
to refutation: wherever a source that shows a fault read any suspect, one read it
(`EvidenceSink.untested`). Validated takes two lines that bear each other out
(`Hypothesis._corroborating`).

The model cannot move a hypothesis: the sink refuses evidence whose source is
`LlmInferred`, and every accepted item carries a verdict computed by the tool's own check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..clock import iso
from ..series import MIN_POINTS, could_show

LLM_INFERRED = "LlmInferred"
GRAPH = "graph"
MEMORY = "memory"
CHANGE = "change"
METRICS = "metrics"
NOT_A_LINE = frozenset({GRAPH, MEMORY})
"""Sources that are no line towards Validated: the plan's own world-model, and past
incidents (a prior, not proof)."""
DATA_SOURCE = {
    "query_stack_graph": GRAPH,
    "prometheus_query": METRICS,
    "loki_query": "logs",
    "k8s_logs": "logs",
    "k8s_pod_status": "kubernetes",
    "k8s_events": "kubernetes",
    "git_log": CHANGE,
    "git_show": CHANGE,
    "flux_status": CHANGE,
    "memory_lookup": MEMORY,
}
"""The data source each tool reads; tools on one source are one line of evidence between
them. A tool not listed is a source of its own (`source_of`)."""


def source_of(tool: str) -> str:
    """The data source `tool` reads (`DATA_SOURCE`)."""
    return DATA_SOURCE.get(tool, tool)


def is_a_line(tool: str) -> bool:
    """Whether `tool` reads an independent line of evidence: not the plan's graph, not memory."""
    return source_of(tool) not in NOT_A_LINE


ROLLOUT_FOOTPRINT = frozenset({"signal=cpu", "signal=memory"})
"""Checks a rollout moves by construction: fresh pods warm up (the plan judges a release on
its errors and latency alone, `rca.scorers.telemetry.CALL_KINDS`). Beside a release of the
same suspect, a rise there is that release seen again, not a second line of evidence."""
HEALTH = frozenset({"signal=error_rate", "signal=latency_p95"})
"""Checks of what a defect shows in as callers see it (the plan's
`rca.scorers.telemetry.CALL_KINDS`): readings of these healthy and steady after a change
say its service did not move (`Hypothesis.unmoved`)."""
SHOWS_A_FAULT = frozenset({METRICS, "logs", "kubernetes"})
"""Sources whose support is the suspect seen failing (a metric that rose, error lines, a
crashing pod), as against a change (it changed) or the graph and memory (a claim re-read)."""
WITH_BASELINE = "window+baseline"
WINDOW_ONLY = "window"
READS = {
    "prometheus_query": WITH_BASELINE,
    "loki_query": WITH_BASELINE,
    "k8s_logs": WITH_BASELINE,
    "k8s_events": WINDOW_ONLY,
    "git_log": WINDOW_ONLY,
    "git_show": WINDOW_ONLY,
    "flux_status": WINDOW_ONLY,
}
"""Which windows each tool's check reads: the alert window against the baseline before it,
or the alert window alone. A tool not listed reads no window (the graph, memory, pod state
now)."""
ROOT_CAUSE_MIN_CONFIDENCE = 0.40
PRIOR_WEIGHT = 0.1
"""Without an independent line, confidence is this share of the plan's prior (its score,
clamped to 0..1): the plan's facts re-read add nothing to the plan."""
MAX_CONFIDENCE = 0.95


class Verdict(StrEnum):
    SUPPORTS = "supports"
    REFUTES = "refutes"
    INCONCLUSIVE = "inconclusive"


class HypothesisState(StrEnum):
    CANDIDATE = "Candidate"
    SUPPORTED = "Supported"
    REFUTED = "Refuted"
    VALIDATED = "Validated"


LEADS = (HypothesisState.SUPPORTED, HypothesisState.VALIDATED)
"""The states a conclusion may be drawn from."""


@dataclass(frozen=True)
class ToolEvidence:
    """One tool call read against one hypothesis (the design's `Evidence` of the agent)."""

    tool: str
    verdict: Verdict
    result_summary: str
    source: str
    check: str = ""
    """Which check produced the verdict; with `tool`, the EVIDENCED_BY edge key."""
    hypothesis: str = ""
    """The suspect (service name) the verdict is about."""
    status: str = "success"
    data: dict[str, Any] = field(default_factory=dict)
    window: tuple[float, float] | None = None
    """The alert window the check read, when it reads one (`READS`)."""
    baseline: tuple[float, float] | None = None
    """The baseline window it compared against, when it compares."""
    changed_at: float | None = None
    """A change check's: when the change it found landed (`settled`)."""
    resolution_s: float | None = None
    """A measurement's: the shortest span its check judged, ending at the window's end."""
    judged_windows: tuple[tuple[float, Verdict], ...] = ()
    """A measurement's: each window its check judged (its length, ending at the window's
    end), with the verdict on the suspect's own reading there (`Hypothesis.unmoved`)."""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "tool": self.tool,
            "check": self.check,
            "hypothesis": self.hypothesis,
            "verdict": str(self.verdict),
            "result_summary": self.result_summary,
            "source": self.source,
            "status": self.status,
        }
        if self.window is not None:
            out["window"] = list(self.window)
        if self.baseline is not None:
            out["baseline"] = list(self.baseline)
        for key in ("changed_at", "resolution_s"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.judged_windows:
            out["judged_windows"] = [[span, str(v)] for span, v in self.judged_windows]
        return out


@dataclass(frozen=True)
class Tally:
    """What a hypothesis's evidence amounts to (`Hypothesis._tally`)."""

    pro_tools: frozenset[str]
    pro: frozenset[str]
    """Data sources for (the graph and memory only while no other source judged)."""
    con: frozenset[str]
    """Data sources against, none of which also supports."""
    objections: frozenset[str]
    """The graph or memory against, once an independent source judged."""


@dataclass
class Hypothesis:
    """A suspect root cause with its plan rank and accumulated evidence."""

    suspect: str
    rank: int
    prior: float = 0.0
    kind: str = "Service"
    suggested_tools: Sequence[str] = ()
    evidence: list[ToolEvidence] = field(default_factory=list)

    @property
    def suspect_ref(self) -> str:
        return f"{self.kind}:{self.suspect}"

    def _tally(self) -> Tally:
        """The verdicts weighed by data source. Once a tool on an independent source has
        judged, the graph's and memory's verdicts no longer decide for or against: they
        re-read the facts the plan was ranked on, or a prior, and a graph that finds the
        suspect's calls healthy cannot outvote its CPU measured in Prometheus. What they
        still say against is an objection: it blocks Validated, which needs nothing
        against at all. A tool (or source) that supports through one check is not also
        counted against: one signal normal (latency) beside one bad (errors) is no evidence
        against the suspect (a service can fail fast). Metrics that support a released
        suspect only through its cpu or memory are the release seen again
        (`ROLLOUT_FOOTPRINT`): neither for nor against. A measurement taken before the
        suspect's change could show in it judges nothing (`settled`)."""
        changed = self.changed_at
        judged = [(e, source_of(e.tool)) for e in self.evidence
                  if e.verdict != Verdict.INCONCLUSIVE and settled(e, changed)]  # fmt: skip
        independent = any(src not in NOT_A_LINE for _, src in judged)
        counted = [(e, src) for e, src in judged if not independent or src not in NOT_A_LINE]
        pro_tools = frozenset(e.tool for e, _ in counted if e.verdict == Verdict.SUPPORTS)
        pro = frozenset(src for e, src in counted if e.tool in pro_tools)
        if CHANGE in pro and _footprint_only(counted):
            pro -= {METRICS}
        if CHANGE in pro and self.unmoved():
            pro -= {CHANGE}
        con = frozenset(src for e, src in counted if e.tool not in pro_tools) - pro
        others = [(e.verdict, src) for e, src in judged if independent and src in NOT_A_LINE]
        objections = frozenset(src for v, src in others if v == Verdict.REFUTES) - frozenset(
            src for v, src in others if v == Verdict.SUPPORTS
        )
        return Tally(pro_tools, pro, con, objections)

    @property
    def changed_at(self) -> float | None:
        """When the suspect's latest change that a check supports landed."""
        return max((e.changed_at for e in self.evidence
                    if e.changed_at is not None and e.verdict == Verdict.SUPPORTS),
                   default=None)  # fmt: skip

    def unmoved(self) -> list[str]:
        """Why the suspect's latest change is no evidence of this incident, if it is not:
        read over windows wholly after the change, late enough to show it (`settled`), its
        errors and latency (`HEALTH`) were healthy and steady in every one, and no reading
        of it, restarts, cpu and memory included, rose in any. The plan's change scorer
        holds the same (`rca.scorers.change`): a release is a lead only if its service
        moved after it. A rise only over a window that began before the change (an earlier
        fault's residue) is no movement after it. A middling reading (risen, not enough to
        support) leaves the change standing, as does no reading after it. Empty when it
        stands."""
        changed = self.changed_at
        if changed is None:
            return []
        after = self._after_change(changed)
        health = [(e, v) for e, v in after if e.check in HEALTH]
        rose = any(v == Verdict.SUPPORTS for _, v in after)
        if rose or not health or any(v != Verdict.REFUTES for _, v in health):
            return []
        read = sorted({e.check.removeprefix("signal=") for e, _ in health})
        return [
            f"{self.suspect}'s change at {iso(changed)} is no evidence of this incident: "
            f"its {', '.join(read)}, read after it, stayed healthy and steady"
        ]

    def _after_change(self, changed: float) -> list[tuple[ToolEvidence, Verdict]]:
        """Each metrics window judged wholly after the change, late enough to show it
        (`settled`), with its verdict."""
        return [(e, v) for e in self.evidence
                if source_of(e.tool) == METRICS and e.window is not None and e.resolution_s
                and could_show(changed, e.window[1], e.resolution_s)
                for span, v in e.judged_windows if e.window[1] - span >= changed]  # fmt: skip

    def _corroborating(self, pro: frozenset[str]) -> frozenset[str]:
        """The independent lines that bear out one another: a change and a metrics rise
        that ended before it are two faults of one service, not one fault seen twice. Where
        the suspect's metrics were read after its change, late enough to show it, and none
        of those readings rose, its metrics (risen only over windows that began before the
        change) do not corroborate the change; with no such reading, they may."""
        lines = pro - NOT_A_LINE
        changed = self.changed_at
        if CHANGE not in lines or METRICS not in lines or changed is None:
            return lines
        after = self._after_change(changed)
        if after and not any(v == Verdict.SUPPORTS for _, v in after):
            return lines - {METRICS}
        return lines

    def unsettled(self) -> list[str]:
        """Why each refutation taken too soon after the suspect's change judges nothing
        (`settled`), for the report."""
        changed = self.changed_at
        if changed is None:
            return []
        return [f"{e.tool} ({e.check}) read {self.suspect} healthy "
                f"{e.window[1] - changed:.0f} s after its change, too soon to show it "
                f"({MIN_POINTS} x {e.resolution_s:g} s): it judges nothing"
                for e in self.evidence
                if not settled(e, changed) and e.window and e.resolution_s]  # fmt: skip

    @property
    def seen_failing(self) -> bool:
        """Whether a source that shows a fault (`SHOWS_A_FAULT`) supports it: the suspect
        seen failing, not only changed, or re-read from the graph or past incidents."""
        return bool(self._tally().pro & SHOWS_A_FAULT)

    @property
    def health_read(self) -> bool:
        """Whether a source that shows a fault (`SHOWS_A_FAULT`) returned a reading of the
        suspect at all: the lead was open to refutation there."""
        return any(source_of(e.tool) in SHOWS_A_FAULT and e.status == "success"
                   for e in self.evidence)  # fmt: skip

    @property
    def state(self) -> HypothesisState:
        """Sources, not tools, are weighed: git_log and git_show agreeing are one line, and
        one measurement against them weighs as much. But a fault shows in some signals, not
        all (a saturated service need not log errors, a failing one need not slow down), so
        a healthy signal is no evidence against a fault another source shows failing
        (`SHOWS_A_FAULT`): against such a source it only keeps the hypothesis from
        Validated (and is not counted in its confidence). A change alone (the suspect
        changed, nothing shows it failing) is refuted by as many healthy measurements as
        before. Validated needs two lines that bear out one another (`_corroborating`)."""
        t = self._tally()
        if not t.pro and not t.con:
            return HypothesisState.CANDIDATE
        if len(t.con) >= len(t.pro) and not t.pro & SHOWS_A_FAULT:
            return HypothesisState.REFUTED
        if len(self._corroborating(t.pro)) >= 2 and not t.con and not t.objections:
            return HypothesisState.VALIDATED
        return HypothesisState.SUPPORTED

    @property
    def confidence(self) -> float:
        """Laplace's rule of succession over the independent sources that judged:
        (for + 1) / (for + against + 2). Nothing is fitted: one line for and none against
        is 2/3, two are 3/4, as many against as for is at most 1/2 (Refuted). An objection
        is no measurement, so it is not counted here; nor is a healthy signal beside a
        source that shows the suspect failing (`state`): a fault shows in some signals, so
        a signal it did not reach is no trial of it (error lines and a steady p95 are 2/3,
        as error lines alone, where the p95 counted against made them 1/2 and lost to a
        suspect whose p95 was never read). Without an independent line it is
        `PRIOR_WEIGHT` of the plan's prior."""
        t = self._tally()
        against = t.con - NOT_A_LINE - (SHOWS_A_FAULT if t.pro & SHOWS_A_FAULT else frozenset())
        lines, con = len(t.pro - NOT_A_LINE), len(against)
        if lines == 0:
            return round(PRIOR_WEIGHT * max(0.0, min(1.0, self.prior)), 3)
        return round(min(MAX_CONFIDENCE, (lines + 1) / (lines + con + 2)), 3)

    @property
    def verified(self) -> bool:
        """A source independent of the plan supports it: the graph proposes, tools verify.
        The graph's support re-reads what the plan was ranked on, and memory's is a prior."""
        return bool(self._tally().pro - NOT_A_LINE)

    def as_dict(self) -> dict[str, Any]:
        return {
            "suspect": self.suspect,
            "suspect_ref": self.suspect_ref,
            "kind": self.kind,
            "rank": self.rank,
            "state": str(self.state),
            "confidence": self.confidence,
            "evidence": [e.as_dict() for e in self.evidence],
        }


def optional_number(value: Any) -> float | None:
    """A record's optional number (None stays None)."""
    return None if value is None else float(value)


def settled(e: ToolEvidence, changed_at: float | None) -> bool:
    """Whether `e` may refute a suspect that changed at `changed_at`: a healthy reading says
    nothing of a change it could not yet see. A rollout shows in its service's readings
    once they hold MIN_POINTS (`rca.series`: what a level and its spread need) of the
    measurement's finest span after it; a reading that ends sooner was taken, mostly or
    wholly, of the version before. A release 30 s before the alert is not refuted by a
    healthy last minute; one 5 min before is, as before."""
    if changed_at is None or e.verdict != Verdict.REFUTES or not e.resolution_s or not e.window:
        return True
    return could_show(changed_at, e.window[1], e.resolution_s)


def _footprint_only(counted: Sequence[tuple[ToolEvidence, str]]) -> bool:
    """Whether the metrics support rests on the rollout's footprint alone."""
    return all(
        e.check in ROLLOUT_FOOTPRINT
        for e, src in counted
        if src == METRICS and e.verdict == Verdict.SUPPORTS
    )
