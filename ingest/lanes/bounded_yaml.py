"""YAML from files a hostile user may write, read within caps.

PyYAML's safe loader builds no arbitrary objects, but an alias is a reference, so 767
bytes of nested aliases (9^7) come back as 4.78M objects the first time they are walked
(45 s in the infra lane; 9^9 about an hour), and one scalar can be as large as the file.
So each document is composed first (libyaml, which caps nesting itself), its node graph is
measured (what aliases expand to, how many nodes, how long each scalar is, whether an
alias refers to itself), and only a document within the caps is constructed.

    doc = load_document(text, YamlLimits())     # YamlLimitError naming the line, or yaml.YAMLError
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from stackgraph.errors import InputError

__all__ = ["LOADER", "YamlLimitError", "YamlLimits", "load_document"]

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML was built with it (several times faster)."""


@dataclass(frozen=True)
class YamlLimits:
    """Caps on one file and each of its documents."""

    max_documents: int = 10_000
    """Documents in one file."""
    max_nodes: int = 5_000_000
    """Nodes (mappings, lists, scalars) in one document, as written."""
    max_alias_nodes: int = 100_000
    """Nodes aliases add to a document when expanded."""
    max_scalar_chars: int = 1 << 20
    """Characters in one scalar (one property's value)."""
    max_objects: int = 100_000
    """Objects one document (a `List`) may hold."""


class YamlLimitError(InputError):
    """A document over one of the caps; `line` is 1-based, 0 when unknown."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _line(node: yaml.Node) -> int:
    mark = node.start_mark
    return mark.line + 1 if mark is not None else 0


def measure(root: yaml.Node, limits: YamlLimits) -> int:
    """The nodes `root` expands to (aliases followed); raises `YamlLimitError` at a cap.
    Iterative, and each distinct node is visited once."""
    size: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in _children(node))
            continue
        if key in size:
            continue
        if key in open_:
            raise YamlLimitError("an alias refers to a node that contains it", _line(node))
        if len(size) + len(open_) >= limits.max_nodes:
            raise YamlLimitError(f"has more than {limits.max_nodes} nodes", _line(node))
        if isinstance(node, yaml.ScalarNode):
            if len(node.value) > limits.max_scalar_chars:
                raise YamlLimitError(
                    f"a value of {len(node.value)} characters is over the "
                    f"{limits.max_scalar_chars}-character limit",
                    _line(node),
                )
            size[key] = 1
            continue
        open_.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in size)
    expanded = size[id(root)]
    if expanded - len(size) > limits.max_alias_nodes:
        raise YamlLimitError(
            f"aliases expand it to {expanded} nodes from {len(size)} written "
            f"(at most {limits.max_alias_nodes} added by aliases)",
            _line(root),
        )
    return expanded


def load_document(text: str, limits: YamlLimits) -> Any:
    """One YAML document, within `limits`. Raises `yaml.YAMLError` for bad YAML (also for
    more than one document) and `YamlLimitError` for a document over a cap."""
    loader = LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        measure(node, limits)
        return loader.construct_document(node)
    finally:
        loader.dispose()
