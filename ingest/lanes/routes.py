"""Routes into the platform: Ingress (networking.k8s.io v1 and v1beta1) and Traefik
IngressRoute / IngressRouteTCP (`traefik.io` and the older `traefik.containo.us` group).

Each yields (host, path, backend k8s Service namespace, name) rows; the infra lane maps the
backend onto a Service node. A route without a host is `*`, without a path `/`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .k8s_objects import Obj, as_list, dig, namespace_of

ROUTE_KINDS = ("Ingress", "IngressRoute", "IngressRouteTCP")


@dataclass(frozen=True)
class RouteRow:
    host: str
    path: str
    namespace: str
    service: str
    """The backend k8s Service name."""
    tls: bool
    entrypoints: tuple[str, ...] = ()


def _ingress_backend(backend: object) -> str | None:
    name = dig(backend, "service", "name") or dig(backend, "serviceName")
    return name if isinstance(name, str) and name else None


def ingress_routes(obj: Obj) -> list[RouteRow]:
    ns = namespace_of(obj)
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    tls_hosts = {h for t in as_list(dig(spec, "tls")) for h in as_list(dig(t, "hosts"))}
    rows: list[RouteRow] = []
    default = _ingress_backend(dig(spec, "defaultBackend") or dig(spec, "backend"))
    if default:
        rows.append(RouteRow("*", "/", ns, default, False))
    for rule in as_list(dig(spec, "rules")):
        host = dig(rule, "host") or "*"
        for p in as_list(dig(rule, "http", "paths")):
            svc = _ingress_backend(dig(p, "backend"))
            if svc:
                path = dig(p, "path") or "/"
                rows.append(RouteRow(str(host), str(path), ns, svc, host in tls_hosts))
    return rows


_MATCHER = re.compile(r"\b(HostSNI|HostRegexp|Host|PathPrefix|PathRegexp|Path)\(([^)]*)\)")
_ARG = re.compile(r"`([^`]*)`|\"([^\"]*)\"")


def parse_match(rule: str) -> tuple[list[str], list[str]]:
    """Hosts and paths named in a Traefik rule: Host(`a`) && PathPrefix(`/api`)."""
    hosts: list[str] = []
    paths: list[str] = []
    for fn, args in _MATCHER.findall(rule):
        values = [a or b for a, b in _ARG.findall(args)]
        if fn.startswith("Host"):
            hosts.extend(v for v in values if v)
        else:
            paths.extend(v for v in values if v)
    return hosts, paths


def traefik_routes(obj: Obj) -> list[RouteRow]:
    ns = namespace_of(obj)
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    entry = tuple(sorted(str(e) for e in as_list(dig(spec, "entryPoints"))))
    tls = isinstance(dig(spec, "tls"), dict)
    rows: list[RouteRow] = []
    for route in as_list(dig(spec, "routes")):
        hosts, paths = parse_match(str(dig(route, "match") or ""))
        for svc in as_list(dig(route, "services")):
            if not isinstance(svc, dict) or svc.get("kind", "Service") != "Service":
                continue  # TraefikService (weighted/mirroring) is not a k8s Service
            name = svc.get("name")
            if not isinstance(name, str) or not name:
                continue
            svc_ns = svc.get("namespace") if isinstance(svc.get("namespace"), str) else ns
            for host in hosts or ["*"]:
                for path in paths or ["/"]:
                    rows.append(RouteRow(host, path, str(svc_ns), name, tls, entry))
    return rows


def routes_of(obj: Obj) -> list[RouteRow]:
    return traefik_routes(obj) if obj.get("kind") != "Ingress" else ingress_routes(obj)
