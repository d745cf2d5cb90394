"""`run_e2e(...)`: replay labelled incidents through the API, end to end, and score them.

    cases ─▶ place ─▶ OpenMetrics ─▶ promtool ─▶ Prometheus          (once, as `eval` does)
          └▶ per case: alert from the data (`detect_alert`, `case_alert`)
             └▶ per arm (clean; distractor: + an unrelated recent deploy):
                  graph of its own ◀─ lanes + Git monorepo (`world.build_world`)
                  `serve`'s app on 127.0.0.1 ◀─ settings a deployment would give it
                  POST the Alertmanager webhook ─▶ poll the incident until it ends
                  ─▶ plan, conclusion, evidence, time ─▶ scorecard (`score`)

The app is configured as a user's deployment would be: `prometheus_url` and
`agent_prometheus_url` (what `PROMETHEUS_URL` sets) name the harness's Prometheus, the
read path's log and span files are those the replay writes, `agent_repos` maps every
service to the case's monorepo, `ollama_host` stays as configured (the model when set,
else the deterministic tool floor), and `api_investigate_at: fired`, so an alert that
fired in the past is investigated as of its firing (the agent's tools read up to the
alert's startsAt already). The incident memory keeps its vectors in the case's graph
(dropped after), never in a configured Qdrant collection.
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from stackgraph.config import Settings
from stackgraph.ingest import GraphIngestor
from stackgraph.memory.knowledge import trajectories, trajectory_node
from stackgraph.rca import Alert
from stackgraph.schema import NodeRecord, RecordBatch
from stackgraph.store import GraphStore

from ..alerting import AlertTime, detect_alert
from ..datasets.model import Case
from ..harness import dataset_prometheus, load, manifests_beside
from ..narrowed import left_out, narrowed
from ..openmetrics import place
from ..replay import Replayer, case_alert
from .api import confirm, run_incident, serving, webhook
from .score import Outcome, scorecard
from .world import DISTRACTOR_LEAD_S, Distractor, build_world, pick_distractor

__all__ = ["ARMS", "run_e2e"]

ARMS = ("clean", "distractor")
SUMMARY_CHARS = 200
"""What the scorecard keeps of a tool's summary: enough to read a verdict's reason."""
Progress = Callable[[int, int, str], None]
EXTERNAL_URL = "http://alertmanager.invalid:9093"
"""Where the webhook says it comes from (Alertmanager's `externalURL`)."""


def _what_checks_said(evidence: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """`tool:check` → each check's verdict and the start of what the tool said."""
    return {
        f"{e['tool']}:{e.get('check') or 'default'}": (
            f"{e['verdict']}: {str(e.get('result_summary') or '')[:SUMMARY_CHARS]}"
        )
        for e in evidence
    }


def _ranking(services: list[str], known: tuple[str, ...]) -> list[str]:
    """As `stackgraph eval` ranks: the plan's services, then the rest by name."""
    ranked = [s for s in dict.fromkeys(services) if s in known]
    return ranked + sorted(s for s in known if s not in ranked)


def first_plan(plan: dict[str, Any]) -> list[str]:
    """The ranking the investigation started from: an escalated incident's plan is its
    last attempt's (leads refuted before are ranked last), so the first attempt's leads,
    then the rest of the final plan, stand for the plan the agent was given first."""
    final = [str(c["service"]) for c in plan.get("candidates") or []]
    attempts = (plan.get("program") or {}).get("attempts") or []
    if not attempts:
        return final
    lead = [str(s) for s in attempts[0].get("top") or []]
    return lead + [s for s in final if s not in lead]


def _outcome(
    case: Case,
    arm: str,
    fired: AlertTime,
    detail: dict[str, Any],
    seconds: float,
    distractor: Distractor | None,
) -> Outcome:
    plan = detail.get("plan") or {}
    hyps = {h["suspect"]: h for h in detail.get("hypotheses") or []}
    conclusion = detail.get("conclusion")
    chosen = hyps.get(conclusion or "")
    calibrated = (detail.get("report") or {}).get("calibration") or {}
    truth = hyps.get(case.root_cause) or {}
    events = [str(e) for e in detail.get("events") or []]
    window = plan.get("window")
    return Outcome(
        case_id=case.case_id,
        fault_type=case.fault_type,
        root_cause=case.root_cause,
        arm=arm,
        alert=fired,
        plan_ranking=_ranking(first_plan(plan), case.services),
        state=str(detail.get("state")),
        ending=detail.get("ending"),
        conclusion=conclusion,
        conclusion_state=None
        if chosen is None
        else str(calibrated.get("state") or chosen["state"]),
        confidence=None
        if chosen is None
        else float(calibrated.get("stated", chosen["confidence"])),
        evidence_confidence=None if chosen is None else float(chosen["confidence"]),
        calibrated_on=int(calibrated.get("earlier", 0)),
        tool_calls=len(detail.get("evidence") or []),
        seconds=seconds,
        floor=any("deterministic tool floor" in e for e in events),
        plan_window=(float(window[0]), float(window[1])) if window else None,
        conclusion_tools=sorted(
            {e["tool"] for e in (chosen or {}).get("evidence", []) if e["verdict"] == "supports"}
        ),
        conclusion_evidence=_what_checks_said(
            e for e in (chosen or {}).get("evidence", []) if e["verdict"] != "inconclusive"
        ),
        root_cause_state=str(truth["state"]) if truth else None,
        root_cause_evidence=_what_checks_said(truth.get("evidence", [])),
        hypotheses=[
            (str(h["suspect"]), str(h["state"]), float(h["confidence"]))
            for h in detail.get("hypotheses") or []
        ],
        distractor=None if distractor is None else distractor.service,
        distractor_healthy=None if distractor is None else distractor.healthy,
        distractor_state=None
        if distractor is None or distractor.service not in hyps
        else str(hyps[distractor.service]["state"]),
        notes=[*(detail.get("plan") or {}).get("notes", [])][:20],
    )


class E2ERunner:
    """Runs cases against one Prometheus, one graph key and one app per case and arm. With
    `feedback`, each clean incident, once scored, is confirmed with its label as a user
    would, and its labelled trajectory is carried into every later case's graph: the
    platform's history of outcomes (what calibrates the confidence an incident states)."""

    def __init__(self, store: GraphStore, settings: Settings, manifests_root: Path | None,
                 timeout_s: float, feedback: bool = True) -> None:  # fmt: skip
        self.store = store
        self.feedback = feedback
        self.history: list[NodeRecord] = []
        """Labelled trajectories of the cases done: written into each later case's graph."""
        self._labelled: list[NodeRecord] = []
        self.replayer = Replayer(store, settings, manifests_root, attempts=0)
        self.token = secrets.token_urlsafe(24)
        self.timeout_s = timeout_s
        self.run_id = uuid.uuid4().hex[:8]
        self.spent: dict[str, float] = {}

    def close(self) -> None:
        self.replayer.close()

    def _add(self, name: str, since: float) -> None:
        self.spent[name] = self.spent.get(name, 0.0) + time.perf_counter() - since

    def _drop(self, graph: GraphStore) -> None:
        with GraphIngestor(graph, who="eval") as writer:
            writer.drop_graph()
        keys = list(self.store.conn.scan_iter(f"stackgraph:{graph.graph_name}:*", count=1000))
        if keys:  # incident records, the job stream, the writer lease
            self.store.conn.delete(*keys)

    def run(self, case: Case, index: int, arms: tuple[str, ...]) -> list[Outcome]:
        t = time.perf_counter()
        fired = detect_alert(self.replayer.metrics, case.symptom_service, case.inject_time,
                             case.alert_window[1], case.baseline_window,
                             case.recorded_alert)  # fmt: skip
        self._add("alert_s", t)
        alert = case_alert(case, fired)
        out = []
        for arm in arms:
            distractor = pick_distractor(case, fired.fired_at) if arm == "distractor" else None
            if arm == "distractor" and distractor is None:
                continue
            out.append(self._arm(case, index, arm, fired, alert, distractor))
        self.history += self._labelled  # after every arm: no arm sees its own case's label
        self._labelled = []
        return out

    def _arm(self, case: Case, index: int, arm: str, fired: AlertTime, alert: Alert,
             distractor: Distractor | None) -> Outcome:  # fmt: skip
        key = f"{self.store.graph_name}-e2e-{self.run_id}-{index}-{arm}"
        graph = GraphStore(self.store.conn, key, self.store.where)
        folder = Path(tempfile.mkdtemp(prefix="sg-e2e-"))
        try:
            t = time.perf_counter()
            repo, notes = build_world(self.replayer, graph, case, fired.fired_at, folder,
                                      distractor)  # fmt: skip
            if self.history:
                with GraphIngestor(graph, who="eval") as writer:
                    writer.write(RecordBatch(nodes=list(self.history)))
            self._add("lanes_s", t)
            replay_ranking = None
            if arm == "clean":  # what `stackgraph eval` ranks on this graph, for reference
                plan = self.replayer.planner(graph, alert, at=fired.fired_at,
                                             limit=len(case.services) + 10)  # fmt: skip
                replay_ranking = _ranking([c.service for c in plan.candidates], case.services)
            settings = self.replayer.settings.model_copy(
                update={"graph": key, "agent_repos": {s: repo for s in case.services}}
            )
            payload = webhook(alert, external_url=EXTERNAL_URL,
                              generator_url=f"{settings.prometheus_url}/graph")  # fmt: skip
            t = time.perf_counter()
            with serving(settings, graph, self.token) as url:
                self._add("serve_start_s", t)
                detail, seconds = run_incident(url, self.token, payload, self.timeout_s)
                if arm == "clean" and self.feedback:
                    confirm(url, self.token, str(alert.fingerprint), case.root_cause)
                t = time.perf_counter()
            if arm == "clean" and self.feedback:
                self._labelled = [trajectory_node(x) for x in trajectories(graph)
                                  if x.fingerprint == alert.fingerprint]  # fmt: skip
            self._add("serve_stop_s", t)
        finally:
            try:
                self._drop(graph)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        result = _outcome(case, arm, fired, detail, seconds, distractor)
        result.replay_ranking = replay_ranking
        result.notes = notes + result.notes
        return result


def run_e2e(
    name: str,
    path: Path | None,
    store: GraphStore,
    *,
    settings: Settings,
    adapter: str | None = None,
    manifests_root: Path | None = None,
    limit: int | None = None,
    distractor: bool = True,
    feedback: bool = True,
    progress: Progress | None = None,
    only: frozenset[str] | None = None,
    topology: bool = True,
) -> dict[str, Any]:
    """The end-to-end scorecard (`score`) of dataset `name`: every case through the API,
    in the clean arm and (with `distractor`) the distractor arm; with `feedback`, in the
    dataset's order, each clean incident confirmed after it is scored (`E2ERunner`); with
    `only`, each case keeps only those sources, and without `topology` no stated call graph
    (`eval.narrowed`)."""
    cases = place(narrowed(load(name, path, adapter)[:limit], only, topology))
    manifests_root = manifests_root or manifests_beside(path)
    arms = ARMS if distractor else ARMS[:1]
    outcomes: list[Outcome] = []
    skipped: list[dict[str, str]] = []
    spent: dict[str, float] = {}
    timeout_s = settings.agent_wall_clock_s + settings.api_lease_wait_s + 120.0
    with dataset_prometheus(cases, settings, spent) as (sources, stats):
        app = settings.model_copy(update={
            **sources, "agent_prometheus_url": sources["prometheus_url"],
            "agent_loki_url": None, "api_investigate_at": "fired",
            "qdrant_url": None, "falkordb_read_url": None,
        })  # fmt: skip
        runner = E2ERunner(store, app, manifests_root, timeout_s, feedback)
        try:
            for i, case in enumerate(cases):
                if progress is not None:
                    progress(i, len(cases), case.case_id)
                try:
                    outcomes += runner.run(case, i, arms)
                except Exception as exc:  # one broken case is listed, not fatal
                    skipped.append({"case_id": case.case_id,
                                    "reason": f"{type(exc).__name__}: {exc}"})  # fmt: skip
            if progress is not None:
                progress(len(cases), len(cases), "done")
        finally:
            runner.close()
    llm = bool(settings.ollama_host)
    mode = (f"LLM {settings.agent_model} at {settings.ollama_host}" if llm
            else "deterministic tool floor, no LLM (OLLAMA_HOST unset)")  # fmt: skip
    n = max(1, len({o.case_id for o in outcomes}))
    runs = max(1, len(outcomes))
    cost = {
        "series": stats["series"], "samples": stats["samples"],
        "backfill_s": round(spent.get("openmetrics_s", 0.0) + spent.get("backfill_s", 0.0), 2),
        "alert_s_per_case": round(runner.spent.get("alert_s", 0.0) / n, 3),
        **{f"{k.removesuffix('_s')}_s_per_incident": round(v / runs, 3)
           for k, v in runner.spent.items() if k != "alert_s"},
    }  # fmt: skip
    notes = [
        f"mode: {mode}",
        "the app plans with `api_investigate_at: fired` (the alert window ends at the alert's "
        "startsAt, where the agent's tools read up to); 'replay plan' is `stackgraph eval`'s "
        "ranking in process on the same graph, the same windows: the two differ only if the "
        "API's path does",
        "feedback: "
        + (
            "each clean incident, once scored, confirmed with its root cause as a "
            "user would; its labelled trajectory carried into every later case's "
            "graph, so later incidents state their confidence calibrated by it "
            "(nothing else carries: the plan never sees a label)"
            if feedback
            else "none (--no-feedback): every incident states the evidence's confidence"
        ),
        f"distractor arm: one release of a service whose series stayed in band (not the root "
        f"cause, not the symptom), {DISTRACTOR_LEAD_S / 60:g} min before the alert: a commit "
        "in its folder of the monorepo and a HelmRelease revision; no telemetry change",
        *left_out(only, topology),
    ]
    return scorecard(name, outcomes, mode=mode, llm=llm, skipped=skipped, cost=cost,
                     notes=notes)  # fmt: skip
