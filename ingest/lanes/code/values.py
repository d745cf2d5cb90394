"""What a Python expression is worth statically: a literal, an env/settings name, or both.

`os.environ.get("CART_SERVICE_URL", "http://cart:8080")` is worth the text
`http://cart:8080` and the name `CART_SERVICE_URL`; `f"{CART_URL}/items"` is worth whatever
`CART_URL` is worth plus `/items`. Unknown parts become `{}`. Names then map to services or
datastores by stripping the usual suffixes (`_SERVICE_URL`, `_DSN`, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import libcst as cst
from libcst.helpers import get_full_name_for_node

HOLE = "{}"


@dataclass(frozen=True)
class Value:
    """A statically known string (holes as `{}`) and the config names it came through."""

    text: str | None = None
    names: tuple[str, ...] = ()

    def __add__(self, other: Value) -> Value:
        if self.text is None and other.text is None:
            return Value(None, self.names + other.names)
        return Value((self.text or HOLE) + (other.text or HOLE), self.names + other.names)

    @property
    def exact(self) -> str | None:
        """The text when it has no holes."""
        return self.text if self.text is not None and HOLE not in self.text else None


_ENV_CALLS = {"os.environ.get", "os.getenv", "environ.get", "getenv", "os.environ.setdefault"}


class Resolver:
    """Evaluates expressions against a file's assignments and settings-class fields.

    `qualify` maps a dotted name through the file's imports; `external` looks up string
    constants other files of the same service define (imported constants).
    """

    def __init__(
        self,
        assigns: Mapping[str, cst.BaseExpression],
        fields: Mapping[str, cst.BaseExpression],
        qualify: Callable[[str], str],
        external: Callable[[str], str | None],
    ) -> None:
        self.assigns = assigns
        self.fields = fields
        self.qualify = qualify
        self.external = external

    def value(self, node: cst.BaseExpression | None, depth: int = 0) -> Value:
        if node is None or depth > 8:
            return Value()
        if isinstance(node, cst.SimpleString):
            try:  # libcst evaluates with `ast.literal_eval`, which refuses e.g. a NUL
                lit = node.evaluated_value
            except (SyntaxError, ValueError):
                return Value()
            return Value(lit if isinstance(lit, str) else None)
        if isinstance(node, cst.ConcatenatedString):
            return self.value(node.left, depth + 1) + self.value(node.right, depth + 1)
        if isinstance(node, cst.FormattedString):
            out = Value("")
            for part in node.parts:
                if isinstance(part, cst.FormattedStringText):
                    out = out + Value(part.value)
                elif isinstance(part, cst.FormattedStringExpression):
                    out = out + self.value(part.expression, depth + 1)
            return out
        if isinstance(node, cst.Name):
            return self._name(node.value, depth)
        if isinstance(node, cst.Attribute):
            return self._attribute(node, depth)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            return self.value(node.left, depth + 1) + self.value(node.right, depth + 1)
        if isinstance(node, cst.Call):
            return self._call(node, depth)
        if isinstance(node, cst.Subscript):
            base = get_full_name_for_node(node.value) or ""
            if self.qualify(base) in {"os.environ", "environ"} and len(node.slice) == 1:
                idx = node.slice[0].slice
                if isinstance(idx, cst.Index):
                    env = self.value(idx.value, depth + 1).exact
                    return Value(None, (env,) if env else ())
        if isinstance(node, cst.List | cst.Tuple) and node.elements:
            return self.value(node.elements[0].value, depth + 1)
        return Value()

    def _name(self, name: str, depth: int) -> Value:
        if name in self.assigns:
            inner = self.value(self.assigns[name], depth + 1)
            return Value(inner.text, (*inner.names, name))
        ext = self.external(name)
        return Value(ext, (name,))

    def _attribute(self, node: cst.Attribute, depth: int) -> Value:
        attr = node.attr.value
        if attr in self.fields:  # settings.cart_service_url with a class default
            inner = self.value(self.fields[attr], depth + 1)
            return Value(inner.text, (*inner.names, attr.upper()))
        ext = self.external(attr)
        return Value(ext, (attr.upper(),))

    def _call(self, node: cst.Call, depth: int) -> Value:
        func = self.qualify(get_full_name_for_node(node.func) or "")
        args = [a for a in node.args if a.keyword is None]
        if func in _ENV_CALLS and args:
            env = self.value(args[0].value, depth + 1).exact
            default = args[1].value if len(args) > 1 else kwarg(node, "default")
            inner = self.value(default, depth + 1)
            return Value(inner.text, (*inner.names, *([env] if env else [])))
        if func == "str" and args:
            return self.value(args[0].value, depth + 1)
        return Value()


def kwarg(call: cst.Call, *names: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in names:
            return arg.value
    return None


def positional(call: cst.Call, index: int) -> cst.BaseExpression | None:
    args = [a for a in call.args if a.keyword is None and not a.star]
    return args[index].value if len(args) > index else None


_SERVICE_SUFFIXES = (
    "_SERVICE_BASE_URL", "_SERVICE_URL", "_SVC_URL", "_BASE_URL", "_API_URL", "_URL",
    "_SERVICE_ADDR", "_ADDRESS", "_ADDR", "_SERVICE_HOST", "_HOST", "_ENDPOINT", "_URI",
)  # fmt: skip
_STORE_SUFFIXES = ("_URL", "_DSN", "_URI", "_HOST", "_ADDRESS", "_ADDR", "_CONN", "_CONNINFO")
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "0.0.0.0", "::1", "host.docker.internal"}


def _stem(name: str, suffixes: Iterable[str]) -> str | None:
    upper = name.upper()
    for suffix in suffixes:
        if upper.endswith(suffix) and len(upper) > len(suffix):
            return upper[: -len(suffix)].strip("_").lower().replace("_", "-")
    return None


def url_host(text: str | None) -> str | None:
    """The host of a URL-looking literal, unless it is a hole or a loopback address."""
    if not text or "://" not in text:
        return None
    try:
        host = urlsplit(text.split(",")[0]).hostname
    except ValueError:
        return None
    if not host or HOLE in host or "{" in host or host in _LOCAL_HOSTS:
        return None
    return host


def _service_variants(word: str) -> list[str]:
    out = [word]
    for suffix in ("-service", "-svc", "-api", "-server"):
        if word.endswith(suffix):
            out.append(word[: -len(suffix)])
    return out


def service_of(value: Value, known: Iterable[str]) -> str | None:
    """The known service a URL value points at: by host first, then by config name."""
    names = set(known)
    host = url_host(value.text)
    if host:
        for cand in (host, host.split(".")[0]):
            for v in _service_variants(cand):
                if v in names:
                    return v
    for name in reversed(value.names):
        stem = _stem(name, _SERVICE_SUFFIXES)
        if stem:
            for v in _service_variants(stem):
                if v in names:
                    return v
    return None


_SCHEMES = {
    "postgres": "postgresql", "postgresql": "postgresql", "redis": "redis", "rediss": "redis",
    "mongodb": "mongodb", "mongodb+srv": "mongodb", "nats": "nats", "tls": "nats",
    "mysql": "mysql", "sqlite": "sqlite", "falkor": "falkordb", "falkors": "falkordb",
}  # fmt: skip


def scheme_system(text: str | None) -> str | None:
    if not text or "://" not in text:
        return None
    scheme = text.split("://", 1)[0].lower().split("+", 1)[0]
    return _SCHEMES.get(scheme)


_NAME_OK = re.compile(r"^[a-z0-9][a-z0-9._-]{0,126}$")


def datastore_name(value: Value, system: str, service: str, known: Iterable[str]) -> str:
    """A datastore's name from its URL's host or its config name; else `<service>-<system>`."""
    names = set(known)
    host = url_host(value.text)
    candidates: list[str] = []
    if host:
        candidates += [host.split(".")[0], host]
    elif value.text and "://" not in value.text and HOLE not in value.text:
        candidates.append(value.text.split(":")[0])  # a bare host= literal
    candidates += [s for n in reversed(value.names) if (s := _stem(n, _STORE_SUFFIXES))]
    for cand in candidates:
        if cand in names:
            return cand
    for cand in candidates:
        if _NAME_OK.match(cand) and cand not in {"database", "db"} | _LOCAL_HOSTS:
            return cand
    return f"{service}-{system}"
