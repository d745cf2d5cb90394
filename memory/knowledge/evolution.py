"""Evolution: labelled trajectories mined into small, atomic proposals, each one change to
the knowledge ({add, update, delete} x {skeleton, rule, program}). A proposal only becomes
knowledge through the dual gate (`stackgraph.eval.gates`).

Deterministic miners, per alert signature (labelled trajectories only):

- **program choice**: where the plan's first lead was not the root cause in MIN_SOURCES of
  them, every other shipped playbook, and every composition the caller offers (stage 2's
  fusions of the default program's scorers), is proposed for the signature. Its sources
  are the incidents it missed (the inner gate: better there); the signature's incidents it
  got right stay outside them, where the outer gate's testbed draws from (no worse there);
- **skeleton** (tool order): the checks that supported the true root cause in the correct
  runs, in the order they ran, the most common sequence;
- **rule, `-`** (an anti-pattern): the first divergence of the wrong runs from the correct
  ones, the check that first supported a suspect that was not the root cause, when it did
  so in MIN_SOURCES wrong runs and never supported a true root cause of the signature;
- **series that mislead** (a program choice with polarity `-`, OpsHarness's "moves with load
  here; never the evidence"): the series that put a wrong first lead first, its strongest
  that left its band, in MIN_SOURCES plans of the signature, and never the strongest of a
  first lead that was the root cause. The proposal is the signature's program as it stands
  with that series judged by no scorer (`merge`'s `mute`); its sources are the plans it
  misled;
- **delete**: an item of the signature that the runs using it got wrong more often than
  right (MIN_SOURCES of them at least).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stackgraph.rca.programs import playbook, playbook_names

from .items import Item, Knowledge
from .trajectory import Trajectory

__all__ = ["MIN_SOURCES", "Proposal", "apply", "mine"]

MIN_SOURCES = 2
"""A pattern seen once is an anecdote: a proposal rests on two trajectories at least."""
MUTED = "-muted"
"""The suffix of a program whose `merge` leaves out series that misled here."""


@dataclass(frozen=True)
class Proposal:
    op: str
    """add | update | delete"""
    item: Item
    sources: tuple[str, ...]
    """The trajectories (incident fingerprints) it was mined from: the inner gate's set."""
    why: str

    @property
    def id(self) -> str:
        return f"{self.op}:{self.item.id}"

    def as_dict(self) -> dict[str, object]:
        return {"op": self.op, "item": self.item.to_dict(), "sources": list(self.sources),
                "why": self.why}  # fmt: skip


def apply(k: Knowledge, p: Proposal) -> Knowledge:
    """The next version with the proposal applied (to a copy: `k` is unchanged)."""
    rest = [i for i in k.items if i.id != p.item.id]
    items = rest if p.op == "delete" else [*rest, p.item]
    return k.with_items(items, f"{p.op} {p.item.id}: {p.why}")


def _supported(t: Trajectory) -> list[tuple[str, str]]:
    """(tool, suspect) of each supporting step, in order."""
    return [(s.tool, s.suspect) for s in t.steps if s.verdict == "supports"]


def mine(
    trajectories: Iterable[Trajectory], k: Knowledge, playbooks: Sequence[str],
    programs: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
) -> list[Proposal]:  # fmt: skip
    """Every proposal the labelled trajectories support (module docstring); `programs`:
    compositions (name -> bindings) proposed as program choices beside the playbooks."""
    groups: dict[str, list[Trajectory]] = defaultdict(list)
    for t in trajectories:
        if t.label != "pending":
            groups[t.signature].append(t)
    out: list[Proposal] = []
    for sig, runs in sorted(groups.items()):
        out += _programs(sig, runs, k, playbooks, programs or {})
        out += _skeleton(sig, runs, k)
        out += _anti_patterns(sig, runs)
        out += _misleading(sig, runs, k)
        out += _deletions(sig, runs, k)
    return out


def _standing(
    sig: str, runs: list[Trajectory], k: Knowledge,
) -> tuple[str, list[dict[str, Any]], str]:  # fmt: skip
    """The program the signature plans with now (its name and bindings), and whether a
    proposal for it adds an item or updates the signature's own."""
    current = k.program_for(sig)
    op = "update" if current is not None and current.signature == sig else "add"
    if current is not None:
        name = str(current.data.get("program", "default"))
        if current.data.get("bindings"):
            return name, [dict(b) for b in current.data["bindings"]], op
    else:
        name = next((t.program for t in reversed(runs) if t.program), "default")
    known = name if name in playbook_names() else "default"
    return name, [b.to_dict() for b in playbook(known).bindings], op


def _programs(
    sig: str, runs: list[Trajectory], k: Knowledge, playbooks: Sequence[str],
    programs: Mapping[str, Sequence[Mapping[str, Any]]],
) -> list[Proposal]:  # fmt: skip
    known = [t for t in runs if t.root_cause]
    missed = [t for t in known if not t.leads or t.leads[0] != t.root_cause]
    if len(missed) < MIN_SOURCES:
        return []
    now, _, op = _standing(sig, known, k)
    ids = tuple(t.fingerprint for t in missed)  # what it is mined from; the rest is held out
    choices: list[tuple[str, dict[str, Any]]] = [(p, {"program": p}) for p in playbooks]
    choices += [
        (n, {"program": n, "bindings": [dict(b) for b in bs]}) for n, bs in programs.items()
    ]
    why = f"{len(missed)} of {len(known)} plans missed the cause first with {now}"
    return [
        Proposal(op, Item(f"K3:program:{sig}", "program", f"for {sig}, plan with the {name} "
                          "program", sig, data=data,
                          provenance={"source": "mined", "from": list(ids)}), ids, why)
        for name, data in choices if name != now
    ]  # fmt: skip


def _skeleton(sig: str, runs: list[Trajectory], k: Knowledge) -> list[Proposal]:
    correct = [t for t in runs if t.label == "correct" and t.root_cause]
    seqs: Counter[tuple[str, ...]] = Counter()
    for t in correct:
        seq = tuple(dict.fromkeys(tool for tool, who in _supported(t) if who == t.root_cause))
        if seq:
            seqs[seq] += 1
    if not seqs:
        return []
    seq, n = seqs.most_common(1)[0]
    if n < MIN_SOURCES:
        return []
    item_id = f"K2:skeleton:{sig}"
    had = k.get(item_id)
    if had is not None and tuple(had.data.get("tools") or ()) == seq:
        return []
    ids = tuple(t.fingerprint for t in correct)
    provenance = {"source": "mined", "from": list(ids)}
    item = Item(
        item_id,
        "skeleton",
        f"for {sig}, check with {' then '.join(seq)} first",
        sig,
        data={"tools": list(seq)},
        provenance=provenance,
    )
    return [Proposal("update" if had else "add", item, ids,
                     f"{n} correct run(s) verified the cause with {list(seq)}")]  # fmt: skip


def _anti_patterns(sig: str, runs: list[Trajectory]) -> list[Proposal]:
    good = {
        tool for t in runs if t.root_cause for tool, who in _supported(t) if who == t.root_cause
    }
    first_wrong: dict[str, list[str]] = defaultdict(list)
    for t in runs:
        if t.label != "wrong":
            continue
        for tool, who in _supported(t):
            if who != t.root_cause:  # the first divergence: support for a non-cause
                first_wrong[tool].append(t.fingerprint)
                break
    out = []
    for tool, ids in sorted(first_wrong.items()):
        if len(ids) >= MIN_SOURCES and tool not in good:
            item = Item(f"K3:rule:{sig}:{tool}", "rule", f"for {sig}, {tool} supported the "
                        "wrong suspect: never rely on it", sig, "-", {"tool": tool},
                        {"source": "mined", "from": ids})  # fmt: skip
            why = f"{len(ids)} wrong run(s) first went astray on {tool}"
            out.append(Proposal("add", item, tuple(ids), why))
    return out


def _misleading(sig: str, runs: list[Trajectory], k: Knowledge) -> list[Proposal]:
    known = [t for t in runs if t.root_cause and t.leads and t.lead_series]
    misled: dict[str, list[str]] = defaultdict(list)
    for t in known:
        if t.leads[0] != t.root_cause:
            misled[t.lead_series[0]].append(t.fingerprint)
    decisive = {t.lead_series[0] for t in known if t.leads[0] == t.root_cause}
    name, bindings, op = _standing(sig, known, k)
    merges = [b for b in bindings if b.get("op") == "merge"]
    out = []
    for ref, ids in sorted(misled.items()):
        if len(ids) < MIN_SOURCES or ref in decisive or not merges:
            continue
        mute = sorted({*(merges[0].get("params") or {}).get("mute", ()), ref})
        data = {"program": f"{name.removesuffix(MUTED)}{MUTED}", "mute": mute,
                "bindings": [{**b, "params": {**(b.get("params") or {}), "mute": mute}}
                             if b is merges[0] else b for b in bindings]}  # fmt: skip
        item = Item(f"K3:program:{sig}", "program", f"for {sig}, judge no candidate on {ref}: "
                    f"it put a wrong lead first in {len(ids)} plans here, the right one in "
                    "none", sig, "-", data, {"source": "mined", "from": ids})  # fmt: skip
        out.append(Proposal(op, item, tuple(ids), f"{ref} led {len(ids)} plan(s) astray"))
    return out


def _deletions(sig: str, runs: list[Trajectory], k: Knowledge) -> list[Proposal]:
    out = []
    for item in k.items:
        if item.signature != sig or item.tier in ("K0", "K1"):
            continue
        used = [t for t in runs if item.id in t.knowledge]
        wrong = [t for t in used if t.label == "wrong"]
        if len(wrong) >= MIN_SOURCES and len(wrong) * 2 > len(used):
            ids = tuple(t.fingerprint for t in used)
            why = f"{len(wrong)} of {len(used)} runs using it were wrong"
            out.append(Proposal("delete", item, ids, why))
    return out


MODEL_PROMPT = """You improve how root causes are diagnosed on this platform. Below are labelled
investigation trajectories grouped by alert signature (alertname:service), and the current
knowledge. Propose small, atomic changes as JSON: {"proposals": [{"op": "add"|"update"|"delete",
"kind": "skeleton"|"rule"|"program", "signature": SIG, "polarity": "+"|"-", "text": WHY,
"data": {...}}]}. A skeleton's data is {"tools": [tool, ...]} (checks to run first, in order);
a rule's data is {"tool": tool} (with polarity "-": a check to skip); a program's data is
{"program": one of PROGRAMS}. Every proposal is judged by replaying incidents; only what is
strictly better and regresses nothing is kept."""


def from_model(data: object, trajectories: Sequence[Trajectory],
               playbooks: Sequence[str]) -> list[Proposal]:  # fmt: skip
    """The model's proposals, checked for shape: ValueError naming what is wrong."""
    if not isinstance(data, dict) or not isinstance(data.get("proposals"), list):
        raise ValueError('expected {"proposals": [...]}')
    by_sig: dict[str, list[str]] = defaultdict(list)
    for t in trajectories:
        if t.label != "pending":
            by_sig[t.signature].append(t.fingerprint)
    out: list[Proposal] = []
    for n, p in enumerate(data["proposals"], 1):
        if not isinstance(p, dict):
            raise ValueError(f"proposal {n}: expected an object")
        op, kind, sig = p.get("op"), p.get("kind"), str(p.get("signature", ""))
        raw = p.get("data")
        body: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
        if op not in ("add", "update", "delete") or kind not in ("skeleton", "rule", "program"):
            raise ValueError(
                f"proposal {n}: op must be add/update/delete, kind skeleton/rule/program"
            )
        if sig not in by_sig:
            raise ValueError(f"proposal {n}: signature {sig!r} has no labelled trajectory")
        if kind == "program" and body.get("program") not in playbooks:
            raise ValueError(f"proposal {n}: program must be one of {list(playbooks)}")
        if kind == "skeleton" and not all(isinstance(x, str) for x in body.get("tools") or [1]):
            raise ValueError(f"proposal {n}: a skeleton's data is {{'tools': [names]}}")
        if kind == "rule" and not isinstance(body.get("tool"), str):
            raise ValueError(f"proposal {n}: a rule's data is {{'tool': name}}")
        tier = "K2" if kind == "skeleton" else "K3"
        suffix = f":{body['tool']}" if kind == "rule" else ""
        item = Item(f"{tier}:{kind}:{sig}{suffix}", kind, str(p.get("text", ""))[:500], sig,
                    "-" if p.get("polarity") == "-" else "+", dict(body),
                    {"source": "model"})  # fmt: skip
        out.append(Proposal(op, item, tuple(by_sig[sig]), f"the model: {item.text}"))
    return out
