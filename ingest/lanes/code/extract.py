"""Pure extraction: one service's Python files (path, text) → graph records and code chunks.

    batch = extract([("services/cart/app/main.py", text), ...], "cart", repo="shop")

Only structure-defining files (a route, an app or router, a NATS subject, an outbound
call to a known service, a datastore client) become `CodeUnit`s. Code-derived links hang
off the CodeUnit, not the Service (`CodeUnit -CALLS-> Service`, `-READS_FROM-> Datastore`,
`-PUBLISHES_TO->`/`-CONSUMES_FROM->`/`-DECLARES_SUBJECT-> NatsSubject`): they say which
file makes the claim, and they never overwrite what the catalog or telemetry say about the
Service itself. Static calls are `Candidate`s until telemetry confirms them. A file that
does not parse, or that crashes or exhausts the parser (run in a child process), is a
`Rejection` naming path and line; the rest goes on.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import libcst as cst

from stackgraph.schema import (
    EdgeRecord,
    NodeRecord,
    NodeRef,
    RecordBatch,
    Rejection,
    Source,
    Status,
)

from ..isolated import ChildFailed, Limits, at, run_isolated
from .chunks import CodeChunk, chunk_module
from .facts import FileFacts, ObjRef
from .names import constants_of
from .structure import file_facts

SRC = Source.STATIC_CODE


@dataclass(frozen=True)
class Known:
    """Names the code may point at: services (for calls) and datastores (for naming)."""

    services: frozenset[str] = frozenset()
    datastores: frozenset[str] = frozenset()


@dataclass
class Analysis:
    """What extraction yields: records for the writer, chunks for the code index."""

    batch: RecordBatch = field(default_factory=RecordBatch)
    chunks: list[CodeChunk] = field(default_factory=list)

    def extend(self, other: Analysis) -> None:
        self.batch.extend(other.batch)
        self.chunks.extend(other.chunks)


LIMITS = Limits()
"""CPU per file and memory of the child that parses a service's files."""


def extract(
    files: Iterable[tuple[str, str]],
    service: str,
    *,
    repo: str = "",
    known: Known | None = None,
    root: str = "",
    url_base: str | None = None,
    limits: Limits = LIMITS,
) -> RecordBatch:
    """The records of one service's files. See `analyse` for the arguments."""
    return analyse(files, service, repo=repo, known=known, root=root, url_base=url_base,
                   limits=limits).batch  # fmt: skip


def analyse(
    files: Iterable[tuple[str, str]],
    service: str,
    *,
    repo: str = "",
    known: Known | None = None,
    root: str = "",
    url_base: str | None = None,
    limits: Limits = LIMITS,
) -> Analysis:
    """Records and chunks of one service's files.

    `files` are (repo-relative path, text); `root` is the service's folder in the repo
    (module names for cross-file imports are taken relative to it); `known` lists the
    services and datastores calls may resolve to (the service itself always counts);
    `url_base` + path gives `CodeUnit.url`.

    The files are parsed in a child process (`isolated`): a file that crashes the parser,
    overruns its CPU budget or breaks the analysis is reported with its path and skipped,
    and the other files are analysed again without it.
    """
    todo = list(files)
    skipped: list[Rejection] = []
    while True:
        try:
            out = run_isolated(limits, _analyse_here, todo, service, repo=repo, known=known,
                               root=root, url_base=url_base, prescan=limits.prescan)  # fmt: skip
        except ChildFailed as exc:
            if not 0 <= exc.index < len(todo):
                where = f"{repo}:{root or '.'}"
                msg = f"the code analysis of its files failed: {exc.reason}"
                skipped.append(Rejection(f"Service{{name={service!r}}}", "source", msg, where))
                return Analysis(RecordBatch(problems=skipped))
            path, _ = todo.pop(exc.index)
            skipped.append(Rejection(_unit_name(repo, path), "source",
                                     f"skipped: {exc.reason}", f"{repo}:{path}"))  # fmt: skip
            continue
        out.batch.problems[:0] = skipped
        return out


def _analyse_here(
    files: list[tuple[str, str]],
    service: str,
    *,
    repo: str,
    known: Known | None,
    root: str,
    url_base: str | None,
    prescan: bool = True,
) -> Analysis:
    """`analyse` in this process; calls `at(i)` before working on `files[i]`."""
    known = known or Known()
    services = known.services | {service}
    out = Analysis()
    parsed: list[tuple[int, str, cst.Module]] = []
    for i, (path, text) in enumerate(files):
        at(i)
        problem = _too_deep(text, path) if prescan else None
        if problem is not None:
            out.batch.problems.append(
                Rejection(_unit_name(repo, path), "source", problem, f"{repo}:{path}")
            )
            continue
        try:
            parsed.append((i, path, cst.parse_module(text)))
        except cst.ParserSyntaxError as exc:
            line, col, msg = _syntax_error(text, path, exc)
            out.batch.problems.append(
                Rejection(_unit_name(repo, path), "source", f"does not parse: {msg}",
                          f"{repo}:{path}:{line}:{col}")
            )  # fmt: skip
        except (RecursionError, ValueError) as exc:
            out.batch.problems.append(
                Rejection(_unit_name(repo, path), "source", f"cannot be parsed: {exc}", path)
            )
    constants: dict[str, set[str]] = defaultdict(set)
    for i, _, module in parsed:
        at(i)
        for name, value in constants_of(module).items():
            constants[name].add(value)

    def external(name: str) -> str | None:  # an imported constant, if unambiguous
        values = constants.get(name, set())
        return next(iter(values)) if len(values) == 1 else None

    prefix = root.rstrip("/") + "/" if root else ""
    facts: list[tuple[int, FileFacts, cst.Module]] = []
    for i, path, module in parsed:
        at(i)
        rel = path[len(prefix) :] if prefix and path.startswith(prefix) else path
        f = file_facts(path, module, service, services, known.datastores, external, rel)
        facts.append((i, f, module))
    at(-1)
    endpoints = _endpoints([f for _, f, _ in facts])
    svc_ref = NodeRecord("Service", {"name": service}).ref
    units = [(i, f, m) for i, f, m in facts if f.defines_structure or endpoints.get(f.path)]
    if units:
        out.batch.nodes.append(NodeRecord("Service", {"name": service}, {}, SRC, origin=repo))
    for i, f, module in units:
        at(i)
        chunks = chunk_module(module, repo, f.path, service)
        out.chunks.extend(chunks)
        eps = endpoints.get(f.path, [])
        _unit_records(out.batch, f, eps, chunks, service, svc_ref, repo, url_base)
    return out


def _too_deep(text: str, path: str) -> str | None:
    """A cheap pre-scan with CPython's own parser, which guards its depth: code it refuses
    for nesting (over 200 brackets, or an expression too deep to build) is code no Python
    runs, and code on which libcst's native parser overflows its stack or takes minutes."""
    try:
        compile(text, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except RecursionError:
        return "is nested too deeply for Python's own parser; skipped"
    except SyntaxError as err:
        # CPython has no error class for it; newer syntax than this Python's is left to libcst
        if "too many nested" in err.msg or "too many levels" in err.msg:
            return f"line {err.lineno}: {err.msg}; skipped"
    except (ValueError, MemoryError):
        pass
    return None


def _syntax_error(text: str, path: str, exc: cst.ParserSyntaxError) -> tuple[int, int, str]:
    """Line, column and message of a syntax error. CPython's compiler pinpoints it better
    than libcst's parser, so ask it first; libcst's own position is the fallback."""
    try:
        compile(text, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as err:
        return err.lineno or exc.editor_line, err.offset or exc.editor_column, err.msg
    except ValueError:
        pass
    return exc.editor_line, exc.editor_column, " ".join(str(exc).strip().splitlines()[:2])


def _unit_name(repo: str, path: str) -> str:
    return f"CodeUnit{{repo={repo!r}, path={path!r}}}"


def _join(*parts: str) -> str:
    path = "/" + "/".join(p.strip("/") for p in parts if p and p.strip("/"))
    return re.sub(r"/{2,}", "/", path)


@dataclass(frozen=True)
class _Endpoint:
    method: str
    route: str
    handler: str
    line: int


def _endpoints(all_facts: list[FileFacts]) -> dict[str, list[_Endpoint]]:
    """Routes with their full prefixes, resolved across the service's files."""
    apps = {a.ref: a for f in all_facts for a in f.apps}
    mounts = [m for f in all_facts for m in f.mounts]

    def find(ref: ObjRef) -> ObjRef | None:
        if ref in apps:
            return ref
        hits = [
            r for r in apps
            if r.var == ref.var
            and (r.module.endswith("." + ref.module) or ref.module.endswith("." + r.module))
        ]  # fmt: skip
        return hits[0] if len(hits) == 1 else None

    parents: dict[ObjRef, list[tuple[ObjRef | None, str | None, bool]]] = defaultdict(list)
    for m in mounts:
        child = find(m.child)
        if child is not None:
            parents[child].append((find(m.parent), m.prefix, m.replaces))

    def prefixes(ref: ObjRef | None, depth: int = 0) -> list[str]:
        if ref is None or depth > 6:
            return [""]
        own = apps[ref].prefix
        ups = parents.get(ref)
        if not ups:
            return [own]
        out: list[str] = []
        for parent, mount_prefix, replaces in ups:
            mine = mount_prefix if replaces and mount_prefix is not None else own
            extra = "" if replaces else (mount_prefix or "")
            out += [_join(p, extra, mine) for p in prefixes(parent, depth + 1)]
        return sorted(set(out))

    result: dict[str, list[_Endpoint]] = {}
    for f in all_facts:
        eps: list[_Endpoint] = []
        for r in f.routes:
            owner = find(r.owner) if r.owner is not None else None
            if r.owner is not None and owner is None and not f.web:
                continue  # a `.get(...)` decorator on something that is not an app
            for p in prefixes(owner):
                eps.append(_Endpoint(r.method, _join(p, r.path), r.handler, r.line))
        if eps:
            result[f.path] = eps
    return result


def _unit_records(
    batch: RecordBatch,
    f: FileFacts,
    endpoints: list[_Endpoint],
    chunks: list[CodeChunk],
    service: str,
    svc: NodeRef,
    repo: str,
    url_base: str | None,
) -> None:
    where = f"{repo}:{f.path}"
    props: dict[str, object] = {
        "language": "python",
        "service": service,
        "embedding_ref": [c.point_id for c in chunks],
    }
    if url_base:
        props["url"] = f"{url_base.rstrip('/')}/{f.path}"
    unit = NodeRecord("CodeUnit", {"repo": repo, "path": f.path}, props, SRC, origin=where)
    batch.nodes.append(unit)
    batch.edges.append(EdgeRecord("IMPLEMENTS", unit.ref, svc, {}, SRC, origin=where))
    for ep in sorted(set(endpoints), key=lambda e: (e.route, e.method)):
        at = f"{where}:{ep.line}"
        key = {"service": service, "method": ep.method, "route": ep.route}
        node = NodeRecord("Endpoint", key, {"handler": ep.handler}, SRC, origin=at)
        batch.nodes.append(node)
        batch.edges.append(EdgeRecord("EXPOSES", svc, node.ref, {}, SRC, origin=at))
        batch.edges.append(EdgeRecord("DEFINED_IN", node.ref, unit.ref, {}, SRC, origin=at))
    roles: dict[str, set[str]] = defaultdict(set)
    lines: dict[str, int] = {}
    for sub in f.subjects:
        roles[sub.subject].add(sub.role)
        lines.setdefault(sub.subject, sub.line)
    for subject in sorted(roles):
        at = f"{where}:{lines[subject]}"
        node = NodeRecord("NatsSubject", {"subject": subject}, {}, SRC, origin=at)
        batch.nodes.append(node)
        batch.edges.append(
            EdgeRecord("DECLARES_SUBJECT", unit.ref, node.ref,
                       {"roles": sorted(roles[subject])}, SRC, origin=at)
        )  # fmt: skip
        for role, etype in (("publish", "PUBLISHES_TO"), ("consume", "CONSUMES_FROM")):
            if role in roles[subject]:
                batch.edges.append(EdgeRecord(etype, unit.ref, node.ref, {}, SRC, origin=at))
    calls: dict[str, set[str]] = defaultdict(set)
    call_line: dict[str, int] = {}
    for c in f.calls:
        calls[c.service].add(f"{c.method} {c.target}")
        call_line.setdefault(c.service, c.line)
    for target in sorted(calls):
        at = f"{where}:{call_line[target]}"
        dst = NodeRecord("Service", {"name": target})
        batch.nodes.append(NodeRecord("Service", {"name": target}, {}, SRC, origin=at))
        batch.edges.append(
            EdgeRecord("CALLS", unit.ref, dst.ref, {"via": sorted(calls[target])}, SRC,
                       Status.CANDIDATE, confidence=0.6, origin=at)
        )  # fmt: skip
    stores: dict[str, tuple[str, set[str], int]] = {}
    for s in f.stores:
        system, clients, line = stores.get(s.name, (s.system, set(), s.line))
        clients.add(s.client)
        stores[s.name] = (system, clients, line)
    for name in sorted(stores):
        system, clients, line = stores[name]
        at = f"{where}:{line}"
        node = NodeRecord("Datastore", {"name": name}, {"db_system": system}, SRC, origin=at)
        batch.nodes.append(node)
        batch.edges.append(
            EdgeRecord("READS_FROM", unit.ref, node.ref, {"clients": sorted(clients)}, SRC,
                       origin=at)
        )  # fmt: skip
