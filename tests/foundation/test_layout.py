"""The house's layout rule: the demo is a client of the product, outside its import graph.

Every module of the installed package (each folder of pyproject's `package-dir` mapping)
is parsed, and every import it can make is read: top-level, inside functions, under
TYPE_CHECKING, relative ones resolved, and module names handed to `importlib.import_module`
/ `__import__` as text. Only `stackgraph.demo.*` may name `stackgraph.demo`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sgtest import REPO, package_dirs

DEMO = "stackgraph.demo"
_NAMES_DEMO = re.compile(r"^stackgraph\.demo(\.|:|$)")
_DYNAMIC = {"import_module", "__import__", "run_module", "find_spec"}


def product_modules() -> Iterator[tuple[str, Path, bool]]:
    """(module name, file, is a package's __init__) of every module of the package."""
    dirs = package_dirs()
    for prefix, folder in dirs.items():
        for path in sorted(folder.rglob("*.py")):
            rel = path.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([prefix, *parts])
            # a sub-folder mapped elsewhere (none today) would be listed twice; skip it
            owner = max((p for p in dirs if name == p or name.startswith(p + ".")), key=len)
            if owner == prefix:
                yield name, path, path.name == "__init__.py"


def _absolute(module: str, is_package: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    base = module.split(".")
    drop = level - 1 if is_package else level
    base = base[: len(base) - drop] if drop else base
    return ".".join([*base, target] if target else base)


def imported(module: str, source: str, is_package: bool = False) -> set[str]:
    """Every module `source` (the text of `module`) may import, by absolute name."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node.level, node.module)
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0] if node.args else None
            if name in _DYNAMIC and isinstance(first, ast.Constant):
                text = str(first.value)
                if text.startswith("."):
                    dots = len(text) - len(text.lstrip("."))
                    text = _absolute(module, is_package, dots, text.lstrip(".") or None)
                out.add(text)
        elif isinstance(node, ast.Constant) and _NAMES_DEMO.match(str(node.value)):
            # "stackgraph.demo.x" as text: runpy, `python -m`, an entry-point value, ...
            out.add(str(node.value).split(":", 1)[0])
    return out


def names_demo(modules: set[str]) -> set[str]:
    return {m for m in modules if _NAMES_DEMO.match(m)}


def is_demo(module: str) -> bool:
    return module == DEMO or module.startswith(DEMO + ".")


def test_nothing_in_the_product_imports_the_demo() -> None:
    offenders = {}
    seen = 0
    for name, path, is_package in product_modules():
        seen += 1
        if is_demo(name):
            continue
        found = names_demo(imported(name, path.read_text(encoding="utf-8"), is_package))
        if found:
            offenders[str(path.relative_to(REPO))] = sorted(found)
    assert seen > 100, "the package's modules were not found"
    assert offenders == {}, f"product modules importing the demo: {offenders}"


@pytest.mark.parametrize(
    ("module", "is_package", "source"),
    [
        ("stackgraph.cli.core", False, "from stackgraph.demo import run_demo\n"),
        ("stackgraph.cli.core", False, "def f():\n    from stackgraph.demo.run import x\n"),
        ("stackgraph.cli.core", False, "from .. import demo\n"),
        ("stackgraph.cli", True, "from ..demo import run\n"),
        ("stackgraph.api.x", False, "if TYPE_CHECKING:\n    from stackgraph.demo import C\n"),
        ("stackgraph", True, "from . import demo\n"),
        ("stackgraph.cli.app", False, "from stackgraph import demo\n"),
        ("stackgraph.cli.app", False, "import stackgraph.demo.run as r\n"),
        ("stackgraph.x", False, "m = importlib.import_module('stackgraph.demo')\n"),
        ("stackgraph.x", False, "m = __import__('stackgraph.demo.run')\n"),
        ("stackgraph.cli.x", False, "import_module('..demo', 'stackgraph.cli')\n"),
        ("stackgraph.x", False, "runpy.run_module('stackgraph.demo')\n"),
        ("stackgraph.x", False, "EP = 'stackgraph.demo.command:demo'\n"),
    ],
)
def test_every_form_of_import_is_caught(module: str, is_package: bool, source: str) -> None:
    """The check above can fail: each way of reaching the demo is seen."""
    assert names_demo(imported(module, source, is_package)), source


def test_plain_imports_and_words_are_not_mistaken_for_the_demo() -> None:
    source = (
        "from stackgraph.rca import Planner\nimport demography\n"
        "HELP = 'stackgraph demo runs the example'\nfrom . import demos\n"
    )
    assert names_demo(imported("stackgraph.cli.app", source)) == set()


def test_the_demo_package_has_no_import_cycle() -> None:
    """The demo's modules import one another one way (run → steps → context)."""
    demo = {name: (path, pkg) for name, path, pkg in product_modules() if is_demo(name)}
    assert {f"{DEMO}.run", f"{DEMO}.command", f"{DEMO}.context"} <= set(demo)
    graph = {
        name: {m for m in imported(name, path.read_text(encoding="utf-8"), pkg) if m in demo}
        - {name}
        for name, (path, pkg) in demo.items()
    }
    done: set[str] = set()

    def visit(name: str, trail: tuple[str, ...]) -> None:
        assert name not in trail, f"import cycle: {' → '.join((*trail, name))}"
        if name in done:
            return
        for nxt in sorted(graph[name]):
            visit(nxt, (*trail, name))
        done.add(name)

    for name in sorted(graph):
        visit(name, ())
