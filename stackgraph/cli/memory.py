"""`stackgraph memory ...`: record, search, show and history of the incident memory."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.table import Table

from stackgraph.config import Settings
from stackgraph.errors import InputError
from stackgraph.rca.clock import require_time

from . import memory_eval as memory_eval  # registers `eval memory`
from .app import app, open_store, out, state_of

memory_app = typer.Typer(help="The bi-temporal incident memory.", no_args_is_help=True)
app.add_typer(memory_app, name="memory")


def _memory(settings: Settings, store: Any) -> Any:
    from stackgraph.memory import memory_for

    return memory_for(settings, store)


def _time(value: str | None, flag: str) -> float | None:
    return None if value is None else require_time(value, flag)


@memory_app.command("search")
def search_cmd(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="The question: alert, symptom, service.")],
    service: Annotated[
        str | None, typer.Option(help="The alert's service: seeds graph proximity.")
    ] = None,
    only_service: Annotated[
        bool, typer.Option("--only-service", help="Keep only incidents on --service.")
    ] = False,
    as_of: Annotated[
        str | None, typer.Option("--as-of", help="What was true then (ISO-8601 or epoch s).")
    ] = None,
    known_at: Annotated[
        str | None, typer.Option("--known-at", help="What the memory held then.")
    ] = None,
    since: Annotated[str | None, typer.Option(help="Incidents that began at/after.")] = None,
    until: Annotated[str | None, typer.Option(help="Incidents that began at/before.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=100)] = 10,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Similar past incidents, best first, each with why it matched."""
    from stackgraph.memory import search

    settings = state_of(ctx).settings()
    with open_store(settings) as store:
        hits = search(
            store, text, memory=_memory(settings, store), service=service,
            only_service=only_service, as_of=_time(as_of, "--as-of"),
            known_at=_time(known_at, "--known-at"), since=_time(since, "--since"),
            until=_time(until, "--until"), limit=limit,
        )  # fmt: skip
    if as_json:
        sys.stdout.write(json.dumps([h.to_dict() for h in hits]) + "\n")
        return
    table = Table(title=f"memory: {text!r}")
    for col in ("incident", "v", "score", "service", "root cause", "why"):
        table.add_column(col)
    for h in hits:
        table.add_row(
            h.incident, str(h.version), f"{h.score:.4f}", h.service, h.root_cause,
            "\n".join(h.why),
        )  # fmt: skip
    out.print(table)


@memory_app.command("show")
def show_cmd(
    ctx: typer.Context,
    fingerprint: Annotated[str, typer.Argument(help="Incident fingerprint.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """The current version of an incident's episode; exits 1 if unknown."""
    from stackgraph.memory import current_version

    with open_store(state_of(ctx).settings()) as store:
        cur = current_version(store, fingerprint)
    if cur is None:
        sys.stderr.write(f"no memory episode for incident {fingerprint!r}\n")
        raise typer.Exit(1)
    data = cur.to_dict()
    if as_json:
        sys.stdout.write(json.dumps(data) + "\n")
        return
    for key, value in data.items():
        out.print(f"[bold]{key}[/bold]: {value}", highlight=False)


@memory_app.command("history")
def history_cmd(
    ctx: typer.Context,
    fingerprint: Annotated[str, typer.Argument(help="Incident fingerprint.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Every version of an incident with both clocks, oldest first; exits 1 if unknown."""
    from stackgraph.memory import versions

    with open_store(state_of(ctx).settings()) as store:
        found = versions(store, fingerprint)
    if not found:
        sys.stderr.write(f"no memory episode for incident {fingerprint!r}\n")
        raise typer.Exit(1)
    rows = [v.to_dict() for v in found]
    if as_json:
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    table = Table(title=f"history of {fingerprint}")
    for col in ("v", "t_valid", "t_invalid", "ingested_at", "expired_at", "root cause",
                "resolution", "supersedes"):  # fmt: skip
        table.add_column(col)
    for r in rows:
        sup = ", ".join(f"v{s['version']} ({s['kind']}: {s['reason']})" for s in r["supersedes"])
        table.add_row(
            str(r["version"]), str(r["t_valid"]), str(r["t_invalid"] or "-"),
            str(r["ingested_at"]), str(r["expired_at"] or "-"), r["root_cause"] or "",
            r["resolution"] or "", sup,
        )  # fmt: skip
    out.print(table)


def outcomes_from_file(path: Path) -> list[Any]:
    """Incident outcomes from a YAML/JSON list of mappings (fields of IncidentOutcome;
    entities as TYPE:REF strings, occurred_at as ISO-8601 or epoch seconds)."""
    from stackgraph.memory import EntityRef, IncidentOutcome

    try:
        items = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"cannot read outcomes file {path}: {exc}") from exc
    if isinstance(items, dict):
        items = [items]
    if not isinstance(items, list):
        raise InputError(f"{path}: expected a list of incident outcomes")
    result = []
    for i, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise InputError(f"{path}: item {i} is not a mapping")
        try:
            data = dict(item)
            data["occurred_at"] = require_time(str(data["occurred_at"]), f"{path} item {i}")
            for key in ("entities", "resolved_by"):
                data[key] = [EntityRef.parse(str(e)) for e in data.get(key) or []]
            result.append(IncidentOutcome(**data))
        except (KeyError, TypeError) as exc:
            raise InputError(f"{path}: item {i}: {exc}") from exc
    return result


@memory_app.command("record")
def record_cmd(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="YAML/JSON list of incident outcomes.")],
    correction: Annotated[
        str | None, typer.Option(help="Supersede as a correction, with this reason.")
    ] = None,
    change_at: Annotated[
        str | None, typer.Option("--change-at", help="Supersede as a world change from then.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Write outcomes as episodes through the single writer (idempotent)."""
    from stackgraph.ingest import GraphIngestor
    from stackgraph.memory import record_episode, supersede

    settings = state_of(ctx).settings()
    outcomes = outcomes_from_file(path)
    written: list[dict[str, Any]] = []
    with open_store(settings) as store:
        memory = _memory(settings, store)
        with GraphIngestor(store, settings.batch_size, settings.lease_ttl_s, who="memory") as w:
            for o in outcomes:
                if change_at is not None:
                    vs = supersede(w, o, memory, kind="change", reason=correction or "change",
                                   effective_at=require_time(change_at, "--change-at"))  # fmt: skip
                elif correction is not None:
                    vs = supersede(w, o, memory, kind="correction", reason=correction)
                else:
                    vs = [record_episode(w, o, memory)]
                written += [v.to_dict() | {"created": v.created} for v in vs]
    if as_json:
        sys.stdout.write(json.dumps(written) + "\n")
        return
    for v in written:
        state = "written" if v["created"] else "unchanged"
        out.print(f"{v['incident']} v{v['version']}: {state}", highlight=False)
