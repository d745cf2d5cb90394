"""Pass 1 over a file: the names it binds (imports, assignments, settings-class fields,
HTTP client bindings), which `values.Resolver` resolves and pass 2 (`structure`) reads."""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from .values import Resolver


class Names(cst.CSTVisitor):
    """Pass 1: imports, simple assignments, class fields, client bindings."""

    def __init__(self, module: str, is_package: bool) -> None:
        self.module = module
        self.package = module if is_package else module.rpartition(".")[0]
        self.imports: dict[str, str] = {}
        self.assigns: dict[str, cst.BaseExpression] = {}
        self.module_assigns: dict[str, cst.BaseExpression] = {}
        self.fields: dict[str, cst.BaseExpression] = {}
        self.bindings: dict[str, cst.Call] = {}
        self._depth = 0
        self._class = 0

    def _absolute(self, node: cst.ImportFrom) -> str:
        mod = get_full_name_for_node(node.module) if node.module else ""
        dots = len(node.relative)
        if not dots:
            return mod or ""
        base = self.package.split(".") if self.package else []
        if dots > 1:
            base = base[: len(base) - (dots - 1)]
        return ".".join([*base, *([mod] if mod else [])])

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = get_full_name_for_node(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.imports[alias.asname.name.value] = full
            else:
                top = full.split(".")[0]
                self.imports.setdefault(top, top)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        base = self._absolute(node)
        for alias in node.names:
            name = get_full_name_for_node(alias.name) or ""
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.imports[local] = f"{base}.{name}" if base else name

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._depth += 1

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._depth -= 1

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._class += 1

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._class -= 1

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        name = target.value if isinstance(target, cst.Name) else None
        if isinstance(target, cst.Attribute):  # self.client = httpx.AsyncClient(...)
            name = target.attr.value
            if isinstance(value, cst.Call):
                self.bindings[name] = value
            return
        if name is None:
            return
        if self._class and not self._depth:
            self.fields[name] = value
            return
        self.assigns[name] = value
        if not self._depth and not self._class:
            self.module_assigns[name] = value
        if isinstance(value, cst.Call | cst.Await):
            call = value.expression if isinstance(value, cst.Await) else value
            if isinstance(call, cst.Call):
                self.bindings[name] = call

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._bind(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, node.value)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None and isinstance(node.asname.name, cst.Name | cst.Attribute):
            item = node.item.expression if isinstance(node.item, cst.Await) else node.item
            if isinstance(item, cst.Call):
                self._bind(node.asname.name, item)

    def qualify(self, dotted: str) -> str:
        if not dotted:
            return ""
        head, _, rest = dotted.partition(".")
        if head in self.imports:
            full = self.imports[head]
            return f"{full}.{rest}" if rest else full
        return dotted


def constants_of(module: cst.Module) -> dict[str, str]:
    """Module-level string constants (`ORDERS_CREATED = "orders.created"`)."""
    names = Names("", False)
    module.visit(names)
    resolver = Resolver(names.module_assigns, {}, names.qualify, lambda _n: None)
    out: dict[str, str] = {}
    for name, expr in names.module_assigns.items():
        text = resolver.value(expr).exact
        if text is not None:
            out[name] = text
    return out
