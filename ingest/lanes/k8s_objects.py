"""Kubernetes objects as plain dicts: reading manifest files, flattening Lists, small accessors.

Both the `infra` and the `change` lane read the same snapshot: a list of parsed objects
(what `kubectl get -o yaml` or the API returns), each with an origin for error messages.

    snap = load_manifests(Path("deploy/"))      # files, multi-document, Lists
    snap.objects[0]["kind"], snap.origins[0]    # "Deployment", "deploy/app.yaml#2"

Reading stays inside what was named: no symlink out of the folder is followed, and YAML is
read within caps (`bounded_yaml`: aliases, nodes, scalars, documents, objects).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from stackgraph.errors import InputError
from stackgraph.schema import Rejection

from .bounded_yaml import YamlLimitError, YamlLimits, load_document
from .folder import files_under

Obj = Mapping[str, Any]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
LIMITS = YamlLimits()
ANNOTATION_PREFIX = "stackgraph.io/"


@dataclass
class Snapshot:
    """Parsed objects with where each came from, plus documents that could not be read."""

    objects: list[dict[str, Any]] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)
    problems: list[Rejection] = field(default_factory=list)

    def add(self, obj: dict[str, Any], origin: str) -> None:
        self.objects.append(obj)
        self.origins.append(origin)

    def extend(self, other: Snapshot) -> None:
        self.objects.extend(other.objects)
        self.origins.extend(other.origins)
        self.problems.extend(other.problems)


def flatten(obj: Any) -> Iterable[dict[str, Any]]:
    """`List` / `DeploymentList` documents yield their items (typed lists lend their kind)."""
    if not isinstance(obj, dict):
        yield obj
        return
    kind = obj.get("kind")
    items = obj.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        item_kind = kind[: -len("List")] if kind != "List" else None
        for item in items:
            if isinstance(item, dict) and item_kind and "kind" not in item:
                item = {"kind": item_kind, "apiVersion": obj.get("apiVersion", ""), **item}
            yield from flatten(item)
        return
    yield obj


def _files(root: Path, snap: Snapshot) -> list[Path]:
    if root.is_file():
        return [root]
    files, outside = files_under(root, lambda p: p.suffix.lower() in MANIFEST_SUFFIXES)
    for p in outside:
        msg = "is a symlink out of the manifests folder; not read"
        snap.problems.append(Rejection(str(p), "file", msg, str(p)))
    return files


def load_manifests(path: Path, limits: YamlLimits = LIMITS) -> Snapshot:
    """Read a manifest file, or every `*.yaml|*.yml|*.json` under a directory (sorted).

    A file given directly is read whatever its suffix (e.g. `deploy.yaml.sample`). A
    document that is not valid YAML, not an object, or over a cap of `limits` becomes a
    problem naming the file and the document index; the other documents are still read.
    """
    if not path.exists():
        raise InputError(f"manifests path {path} does not exist")
    snap = Snapshot()
    for file in _files(path, snap):
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            snap.problems.append(Rejection(str(file), "file", f"cannot be read: {exc}", str(file)))
            continue
        _parse_documents(text, str(file), snap, limits)
    return snap


_DOC_START = re.compile(r"^---(?=[ \t]|$)", re.MULTILINE)


def _split_documents(text: str) -> list[tuple[int, str]]:
    """Documents with their first line number, split on `---` so one bad document does
    not hide the ones after it."""
    out: list[tuple[int, str]] = []
    pos, line = 0, 0
    for m in _DOC_START.finditer(text):
        out.append((line, text[pos : m.start()]))
        line += text.count("\n", pos, m.start())
        pos = m.start() + 3
    out.append((line, text[pos:]))
    return [(ln, doc) for ln, doc in out if doc.strip() and doc.strip() != "..."]


def _parse_documents(text: str, name: str, snap: Snapshot, limits: YamlLimits) -> None:
    documents = _split_documents(text)
    if len(documents) > limits.max_documents:
        msg = f"has {len(documents)} documents, over the limit of {limits.max_documents}"
        snap.problems.append(Rejection(name, "file", msg + "; not read", name))
        return
    for index, (line, chunk) in enumerate(documents):
        where = f"{name}#{index}"
        try:
            doc = load_document(chunk, limits)  # a safe loader (no arbitrary objects)
        except yaml.YAMLError as exc:
            snap.problems.append(
                Rejection(f"document {index}", "yaml", _yaml_msg(exc, line), where)
            )
            continue
        except YamlLimitError as exc:
            at = f" at line {exc.line + line}" if exc.line else ""
            msg = f"not read{at}: {exc}"
            snap.problems.append(Rejection(f"document {index}", "yaml", msg, where))
            continue
        if doc is None:
            continue
        items = list(itertools.islice(flatten(doc), limits.max_objects + 1))
        if len(items) > limits.max_objects:
            msg = f"holds more than {limits.max_objects} objects; not read"
            snap.problems.append(Rejection(f"document {index}", "document", msg, where))
            continue
        for item in items:
            if not isinstance(item, dict):
                msg = f"is a {type(item).__name__}, not a Kubernetes object"
                snap.problems.append(Rejection(f"document {index}", "document", msg, where))
                continue
            snap.add(item, where)


def _yaml_msg(exc: yaml.YAMLError, line_offset: int) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f" at line {mark.line + 1 + line_offset}, column {mark.column + 1}" if mark else ""
    return f"not valid YAML{where}: {problem}"


# -- accessors ---------------------------------------------------------------------------


def meta(obj: Obj) -> Mapping[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def name_of(obj: Obj) -> str:
    n = meta(obj).get("name")
    return n if isinstance(n, str) else ""


def namespace_of(obj: Obj, default: str = "default") -> str:
    ns = meta(obj).get("namespace")
    return ns if isinstance(ns, str) and ns else default


def str_map(value: Any) -> dict[str, str]:
    """A labels / annotations / selector map with non-string entries dropped."""
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items() if v is not None}


def labels(obj: Obj) -> dict[str, str]:
    return str_map(meta(obj).get("labels"))


def annotations_of(obj: Obj) -> dict[str, str]:
    return str_map(meta(obj).get("annotations"))


def steer(obj: Obj, key: str) -> str | None:
    """A `stackgraph.io/<key>` annotation (or label) users set to steer ingestion."""
    full = ANNOTATION_PREFIX + key
    value = annotations_of(obj).get(full) or labels(obj).get(full)
    return value.strip() if value else None


def is_ignored(obj: Obj) -> bool:
    return (steer(obj, "ignore") or "").lower() in {"true", "yes", "1"}


def group_of(obj: Obj) -> str:
    api = obj.get("apiVersion")
    return api.rsplit("/", 1)[0] if isinstance(api, str) and "/" in api else ""


def dig(obj: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def epoch(value: Any) -> int | None:
    """An RFC 3339 timestamp (`2024-05-01T10:00:00Z`) as integer epoch seconds."""
    if isinstance(value, datetime):
        return int(value.timestamp())
    if not isinstance(value, str) or not value:
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return None


def pod_template(obj: Obj) -> Mapping[str, Any]:
    t = dig(obj, "spec", "template")
    return t if isinstance(t, dict) else {}


def containers(obj: Obj) -> list[dict[str, Any]]:
    """The app containers of a workload (or a pod), init containers left out."""
    spec = dig(obj, "spec", "template", "spec") if obj.get("kind") != "Pod" else obj.get("spec")
    return [c for c in as_list(dig(spec, "containers")) if isinstance(c, dict)]


def main_container(obj: Obj) -> dict[str, Any] | None:
    """The container named like the workload, else the first one."""
    cs = containers(obj)
    name = name_of(obj)
    for c in cs:
        if c.get("name") == name:
            return c
    return cs[0] if cs else None
