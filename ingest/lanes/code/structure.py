"""One Python file → the structure it defines or uses, found with libcst.

Two passes over the syntax tree: the first (`names`) learns names (imports, assignments,
settings-class fields, HTTP client bindings), the second (here) finds the structure:

- web apps and routers (FastAPI, APIRouter, Starlette, Flask, Blueprint), their routes
  (`@app.get`, `@bp.route`, `add_api_route`, `add_url_rule`, `Route(...)`) and mounts
  (`include_router`, `register_blueprint`);
- NATS `publish` / `request` / `subscribe` / `pull_subscribe` (core and JetStream);
- outbound HTTP calls (httpx, requests, aiohttp) whose URL resolves to a known service;
- datastore clients (asyncpg, psycopg, SQLAlchemy, redis, pymongo, nats, qdrant, falkordb).

Everything is static: values are literals, module constants, `os.environ` defaults or
settings fields (see `values.py`). Nothing is imported or executed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import MetadataWrapper, PositionProvider

from .facts import AppDef, FileFacts, Mount, ObjRef, OutboundCall, RouteDef, StoreUse, SubjectUse
from .names import Names
from .values import Resolver, Value, datastore_name, kwarg, positional, scheme_system, service_of

APP_KINDS = {
    "fastapi.FastAPI": "fastapi",
    "fastapi.APIRouter": "router",
    "fastapi.routing.APIRouter": "router",
    "starlette.applications.Starlette": "starlette",
    "starlette.routing.Router": "router",
    "flask.Flask": "flask",
    "flask.Blueprint": "blueprint",
    "quart.Quart": "flask",
    "quart.Blueprint": "blueprint",
}
WEB_LIBS = {"fastapi", "starlette", "flask", "quart"}
VERBS = ("get", "post", "put", "patch", "delete", "head", "options", "trace")
HTTP_LIBS = {"httpx", "requests", "aiohttp"}
HTTP_CLIENTS = {
    "httpx.Client", "httpx.AsyncClient", "requests.Session", "requests.session",
    "aiohttp.ClientSession",
}  # fmt: skip
NATS_PUBLISH = {"publish": "publish", "request": "publish"}
NATS_CONSUME = {"subscribe": "consume", "pull_subscribe": "consume"}
_NATS_RECEIVER = re.compile(r"^_?(nc|js|nats.*|.*_nats|.*jetstream.*|.*_js|.*_nc)$", re.I)
_HTTP_RECEIVER = re.compile(r"(client|session|http)", re.I)
_SUBJECT = re.compile(r"^[A-Za-z0-9_$*>-]+(\.[A-Za-z0-9_$*>-]+)*$")

STORE_LIBS = {
    "asyncpg": "postgresql", "psycopg": "postgresql", "psycopg2": "postgresql",
    "psycopg_pool": "postgresql", "sqlalchemy": "", "redis": "redis", "aioredis": "redis",
    "pymongo": "mongodb", "motor": "mongodb", "nats": "nats", "qdrant_client": "qdrant",
    "falkordb": "falkordb",
}  # fmt: skip
STORE_CTORS = {
    "connect", "create_pool", "ConnectionPool", "AsyncConnectionPool", "SimpleConnectionPool",
    "ThreadedConnectionPool", "create_engine", "create_async_engine", "Redis", "StrictRedis",
    "from_url", "MongoClient", "AsyncIOMotorClient", "Client", "QdrantClient",
    "AsyncQdrantClient", "FalkorDB",
}  # fmt: skip


def module_name(path: str) -> str:
    """`app/routers/cart.py` → `app.routers.cart`; `app/__init__.py` → `app`."""
    parts = path.removesuffix(".py").split("/")
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(p for p in parts if p)


class Structure(cst.CSTVisitor):
    """Pass 2: apps, routes, mounts, NATS subjects, outbound calls, datastore clients."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(
        self, facts: FileFacts, names: Names, resolver: Resolver, service: str,
        services: frozenset[str], datastores: frozenset[str],
    ) -> None:  # fmt: skip
        self.f = facts
        self.n = names
        self.r = resolver
        self.service = service
        self.services = services
        self.datastores = datastores
        tops = {v.split(".")[0] for v in names.imports.values()}
        self.web = bool(tops & WEB_LIBS)
        self.http = bool(tops & HTTP_LIBS)
        self.nats = "nats" in tops
        facts.web = self.web
        self._handler: list[str] = []

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def _ref(self, expr: cst.BaseExpression) -> ObjRef | None:
        dotted = get_full_name_for_node(expr)
        if not dotted:
            return None
        head = dotted.split(".")[0]
        if "." not in dotted and head not in self.n.imports:
            return ObjRef(self.f.module, dotted)
        full = self.n.qualify(dotted)
        module, _, var = full.rpartition(".")
        return ObjRef(module, var) if module else ObjRef(self.f.module, var)

    def _str(self, expr: cst.BaseExpression | None) -> str | None:
        return self.r.value(expr).exact if expr is not None else None

    def _methods(self, call: cst.Call, default: str = "GET") -> list[str]:
        node = kwarg(call, "methods")
        if isinstance(node, cst.List | cst.Tuple | cst.Set):
            found = [self._str(e.value) for e in node.elements]
            return sorted({m.upper() for m in found if m}) or [default]
        return [default]

    # -- definitions ---------------------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._handler.append(node.name.value)
        for deco in node.decorators:
            call = deco.decorator
            if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
                continue
            verb = call.func.attr.value
            owner = self._ref(call.func.value)
            path = self._str(positional(call, 0) or kwarg(call, "path", "rule"))
            if path is None or not self._is_app(owner):
                continue
            line = self._line(deco)
            if verb in VERBS:
                methods = [verb.upper()]
            elif verb in {"route", "api_route"}:
                methods = self._methods(call)
            else:
                continue
            for m in methods:
                self.f.routes.append(RouteDef(owner, m, path, node.name.value, line))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._handler.pop()

    def _is_app(self, ref: ObjRef | None) -> bool:
        if ref is None:
            return False
        if any(a.ref == ref for a in self.f.apps):
            return True
        # an imported router, or any app in a web file: confirmed across files later
        return self.web or ref.module != self.f.module

    def visit_Assign(self, node: cst.Assign) -> None:
        if not isinstance(node.value, cst.Call):  # app factories define apps in functions
            return
        kind = APP_KINDS.get(self.n.qualify(get_full_name_for_node(node.value.func) or ""))
        if kind is None:
            return
        prefix = self._str(kwarg(node.value, "prefix", "url_prefix")) or ""
        for t in node.targets:
            if isinstance(t.target, cst.Name):
                ref = ObjRef(self.f.module, t.target.value)
                self.f.apps.append(AppDef(ref, kind, prefix, self._line(node)))

    # -- calls -------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        dotted = get_full_name_for_node(node.func) or ""
        full = self.n.qualify(dotted)
        self._store(node, full)
        if self.http and full in HTTP_CLIENTS:
            base = kwarg(node, "base_url")
            if base is not None:
                self._outbound(node, "*", self.r.value(base))
        if not isinstance(node.func, cst.Attribute):
            if full == "starlette.routing.Route":
                self._starlette_route(node)
            return
        attr = node.func.attr.value
        receiver = node.func.value
        if attr in {"include_router", "register_blueprint"}:
            self._mount(node, receiver, replaces=attr == "register_blueprint")
        elif attr in {"add_api_route", "add_route", "add_url_rule"}:
            self._added_route(node, receiver, attr)
        if attr in NATS_PUBLISH or attr in NATS_CONSUME:
            self._nats(node, receiver, attr)
        if self.http and (attr in VERBS or attr in {"request", "stream"}):
            self._http(node, receiver, attr)

    def _mount(self, node: cst.Call, receiver: cst.BaseExpression, replaces: bool) -> None:
        parent = self._ref(receiver)
        child_expr = positional(node, 0) or kwarg(node, "router", "blueprint")
        child = self._ref(child_expr) if child_expr is not None else None
        if parent is None or child is None:
            return
        prefix = self._str(kwarg(node, "prefix", "url_prefix"))
        self.f.mounts.append(Mount(parent, child, prefix, replaces, self._line(node)))

    def _added_route(self, node: cst.Call, receiver: cst.BaseExpression, attr: str) -> None:
        owner = self._ref(receiver)
        if not self._is_app(owner):
            return
        path = self._str(positional(node, 0) or kwarg(node, "path", "rule"))
        handler_expr = (
            kwarg(node, "view_func") or positional(node, 2)
            if attr == "add_url_rule"
            else kwarg(node, "endpoint", "route") or positional(node, 1)
        )
        handler = (get_full_name_for_node(handler_expr) or "") if handler_expr else ""
        if path is None:
            return
        for m in self._methods(node):
            self.f.routes.append(RouteDef(owner, m, path, handler, self._line(node)))

    def _starlette_route(self, node: cst.Call) -> None:
        path = self._str(positional(node, 0) or kwarg(node, "path"))
        handler_expr = kwarg(node, "endpoint") or positional(node, 1)
        handler = (get_full_name_for_node(handler_expr) or "") if handler_expr else ""
        if path is not None:
            for m in self._methods(node):
                self.f.routes.append(RouteDef(None, m, path, handler, self._line(node)))

    def _receiver_name(self, receiver: cst.BaseExpression) -> str:
        if isinstance(receiver, cst.Name):
            return receiver.value
        if isinstance(receiver, cst.Attribute):
            return receiver.attr.value
        if isinstance(receiver, cst.Call):  # nc.jetstream().publish(...)
            return self._receiver_name(receiver.func)
        return ""

    def _bound_to(self, name: str) -> str:
        call = self.n.bindings.get(name)
        return self.n.qualify(get_full_name_for_node(call.func) or "") if call else ""

    def _nats(self, node: cst.Call, receiver: cst.BaseExpression, attr: str) -> None:
        name = self._receiver_name(receiver)
        bound = self._bound_to(name)
        is_nats = (
            bound.startswith("nats.")
            or bound.endswith(".jetstream")
            or bool(_NATS_RECEIVER.match(name))
            or (self.nats and name in {"jetstream", "client", "conn", "connection"})
        )
        if not is_nats:
            return
        subject = self._str(positional(node, 0) or kwarg(node, "subject"))
        if not subject or not _SUBJECT.match(subject):
            return
        role = NATS_PUBLISH.get(attr) or NATS_CONSUME[attr]
        self.f.subjects.append(SubjectUse(subject, role, self._line(node)))

    def _http(self, node: cst.Call, receiver: cst.BaseExpression, attr: str) -> None:
        head = self.n.qualify(get_full_name_for_node(receiver) or "").split(".")[0]
        name = self._receiver_name(receiver)
        bound = self._bound_to(name)
        if not (head in HTTP_LIBS or bound in HTTP_CLIENTS or _HTTP_RECEIVER.search(name)):
            return
        if attr in {"request", "stream"}:
            method = (self._str(positional(node, 0) or kwarg(node, "method")) or "*").upper()
            url = positional(node, 1) or kwarg(node, "url")
        else:
            method = attr.upper()
            url = positional(node, 0) or kwarg(node, "url")
        value = self.r.value(url)
        if bound in HTTP_CLIENTS and service_of(value, self.services) is None:
            base_call = self.n.bindings[name]
            value = self.r.value(kwarg(base_call, "base_url")) + value
        self._outbound(node, method, value)

    def _outbound(self, node: cst.Call, method: str, value: Value) -> None:
        target = service_of(value, self.services)
        if target is None or target == self.service:
            return
        shown = value.text if value.text is not None else "/".join(value.names)
        self.f.calls.append(OutboundCall(target, method, shown, self._line(node)))

    def _store(self, node: cst.Call, full: str) -> None:
        parts = full.split(".")
        if len(parts) < 2 or parts[0] not in STORE_LIBS or parts[-1] not in STORE_CTORS:
            return
        if parts[0] == "nats" and parts[-1] not in {"connect", "Client"}:
            return
        url = positional(node, 0) or kwarg(
            node, "dsn", "url", "conninfo", "host", "servers", "location", "uri"
        )
        value = self.r.value(url)
        system = STORE_LIBS[parts[0]] or scheme_system(value.text) or parts[0]
        name = datastore_name(value, system, self.service, self.datastores)
        self.f.stores.append(StoreUse(name, system, full, self._line(node)))


def file_facts(
    path: str,
    module: cst.Module,
    service: str,
    services: Iterable[str],
    datastores: Iterable[str] = (),
    external: Callable[[str], str | None] = lambda _n: None,
    module_path: str | None = None,
) -> FileFacts:
    """The structure one parsed file defines or uses.

    `path` names the file (repo-relative); `module_path` is its path relative to the
    service root, used for the dotted module name that cross-file references resolve on.
    """
    rel = module_path if module_path is not None else path
    mod = module_name(rel)
    names = Names(mod, rel.endswith("__init__.py"))
    module.visit(names)
    resolver = Resolver(names.assigns, names.fields, names.qualify, external)
    facts = FileFacts(path, mod)
    for name, expr in names.module_assigns.items():
        text = resolver.value(expr).exact
        if text is not None:
            facts.constants[name] = text
    visitor = Structure(facts, names, resolver, service, frozenset(services), frozenset(datastores))
    MetadataWrapper(module, unsafe_skip_copy=True).visit(visitor)
    return facts
