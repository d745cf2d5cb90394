"""Every query the product runs is a constant `.cypher` file in this folder, loaded by name.

Values always bind as `$parameters`. A few templates carry `<<slot>>` markers for what
Cypher cannot parameterise (a label, a relationship type, the property names of a natural
key); those are filled only from the schema's allow-lists, never from caller text.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import NewType

from stackgraph.schema import EDGES, LABELS

_SLOT = re.compile(r"<<([a-z_]+)>>")
_FRAGMENT = re.compile(r"<<([a-z_]+):([a-z][a-z0-9_]*)>>")
"""`<<name:var>>` inlines the constant predicate `frag_<name>.cypher` about variable `var`."""
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


Query = NewType("Query", str)
"""Query text that came from a template; the store accepts nothing else."""


class TemplateError(ValueError):
    """A template is missing, or a slot was asked to hold something not in the schema."""


@cache
def load(name: str) -> Query:
    """The text of template `name` (without `.cypher`)."""
    if not _NAME.match(name):
        raise TemplateError(f"invalid template name {name!r}")
    path = resources.files(__package__).joinpath(f"{name}.cypher")
    if not path.is_file():
        raise TemplateError(f"no Cypher template named {name!r}")
    text = path.read_text(encoding="utf-8")
    if not name.startswith("frag_"):
        text = _FRAGMENT.sub(_inline_fragment, text)
    return Query(text)


def _inline_fragment(match: re.Match[str]) -> str:
    """Shared predicates (time travel, memory filters) are kept once, in `frag_*.cypher`;
    the variable name is checked by the slot pattern, the text is constant."""
    body = load(f"frag_{match.group(1)}")
    lines = [ln for ln in body.splitlines() if not ln.lstrip().startswith("//")]
    return "(" + " ".join(" ".join(lines).split()).replace("<<var>>", match.group(2)) + ")"


def names() -> list[str]:
    """All template names shipped with the package."""
    root = resources.files(__package__)
    return sorted(p.name[: -len(".cypher")] for p in root.iterdir() if p.name.endswith(".cypher"))


ROW_FIXED = 5
"""Writer rows are lists: [i, hash, source, status, confidence, keys..., properties]."""


def _key_map(props: tuple[str, ...], at: int) -> str:
    return ", ".join(f"{p}: r[{at + i}]" for i, p in enumerate(props))


def _key_map_params(props: tuple[str, ...], param_prefix: str) -> str:
    return ", ".join(f"{p}: ${param_prefix}{i}" for i, p in enumerate(props))


def _label(label: str) -> str:
    if label not in LABELS:
        raise TemplateError(f"label {label!r} is not in the schema")
    return label


@cache
def render(
    name: str,
    label: str | None = None,
    edge: tuple[str, str, str] | None = None,
    prop: str | None = None,
    tag: str | None = None,
    key_at: int = ROW_FIXED,
) -> Query:
    """Template `name` with its slots filled for `label` or `edge` = (type, src, dst).

    Writer rows are positional lists (`ingest.rows`): a node's key values from `r[5]`
    (`key_at`), then its properties map (`<<p>>`); an edge's endpoint node ids are `r[5]`
    and `r[6]`, its own key from `r[7]`, then its properties map.
    """
    text = load(name)
    slots: dict[str, str] = {}
    if label is not None:
        spec = LABELS[_label(label)]
        slots |= {
            "label": spec.name,
            "key": _key_map(spec.keys, key_at),
            "key_one": _key_map_params(spec.keys, "k"),
            "p": f"r[{key_at + len(spec.keys)}]",
        }
        if prop is not None:
            if prop not in (*spec.keys, *spec.indexed, *spec.fulltext, *spec.vector):
                raise TemplateError(f"{prop!r} is not an indexed property of {label}")
            slots["prop"] = prop
    if edge is not None:
        etype, src, dst = edge
        espec = EDGES.get(etype)
        if espec is None:
            raise TemplateError(f"relationship type {etype!r} is not in the schema")
        s, d = LABELS[_label(src)], LABELS[_label(dst)]
        edge_key = _key_map(espec.keys, ROW_FIXED + 2)
        slots |= {
            "type": espec.name,
            "src_label": s.name,
            "dst_label": d.name,
            "src_key_one": _key_map_params(s.keys, "s"),
            "dst_key_one": _key_map_params(d.keys, "d"),
            "edge_key": f" {{{edge_key}}}" if edge_key else "",
            "p": f"r[{ROW_FIXED + 2 + len(espec.keys)}]",
        }
    if tag is not None:
        slots["hash"] = hash_property(tag)
    if label is None and edge is None and "<<type>>" in text:
        raise TemplateError(f"template {name!r} needs a relationship type")

    def fill(match: re.Match[str]) -> str:
        slot = match.group(1)
        if slot not in slots:
            raise TemplateError(f"template {name!r} needs slot {slot!r}")
        return slots[slot]

    return Query(_SLOT.sub(fill, text))


_TAG = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,40}$")


def hash_property(tag: str) -> str:
    """The property holding one writer's content hash (`hash_catalog`, `hash_Tempo`, ...).

    Each lane (or, outside lanes, each source) keeps its own hash, so lanes that assert the
    same node or edge (catalog and infra on a Service, catalog and Tempo on a CALLS edge) do
    not undo each other's "unchanged" on every run. Tags are lane or source names from code.
    """
    if not _TAG.match(tag):
        raise TemplateError(f"invalid hash tag {tag!r}")
    return f"hash_{tag}"


def render_type(name: str, etype: str) -> Query:
    """A template whose slots are a relationship type (and a source's hash property)."""
    if etype not in EDGES:
        raise TemplateError(f"relationship type {etype!r} is not in the schema")
    text = load(name).replace("<<type>>", etype)
    if "<<" in text:
        raise TemplateError(f"template {name!r} has slots render_type cannot fill")
    return Query(text)
