"""Split a parsed file into embeddable chunks: functions, classes, methods, module body.

A class chunk holds its header, docstring and fields (up to its first method); each method
is a chunk of its own (`Class.method`); whatever is left at module level (imports,
constants) is one `<module>` chunk (`stackgraph.schema.chunks`: ids and text hashes).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from stackgraph.schema.chunks import CodeChunk, point_id

__all__ = ["CodeChunk", "chunk_module", "point_id"]


def chunk_module(module: cst.Module, repo: str, path: str, service: str) -> list[CodeChunk]:
    """Chunks of one parsed file, in source order; duplicate symbols get `#2`, `#3`."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    pos = wrapper.resolve(PositionProvider)
    lines = module.code.splitlines()
    out: list[CodeChunk] = []
    seen: dict[str, int] = {}

    def add(symbol: str, kind: str, start: int, end: int) -> None:
        seen[symbol] = seen.get(symbol, 0) + 1
        if seen[symbol] > 1:
            symbol = f"{symbol}#{seen[symbol]}"
        text = "\n".join(lines[start - 1 : end]).strip()
        if text:
            out.append(CodeChunk(repo, path, service, symbol, kind, start, end, text))

    def span(node: cst.CSTNode) -> tuple[int, int]:
        p = pos[node]
        decos = getattr(node, "decorators", ())  # the route decorator belongs to its handler
        start = pos[decos[0]].start.line if decos else p.start.line
        return start, p.end.line

    rest: list[tuple[int, int]] = []
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            add(stmt.name.value, "function", *span(stmt))
        elif isinstance(stmt, cst.ClassDef):
            start, end = span(stmt)
            methods = [s for s in stmt.body.body if isinstance(s, cst.FunctionDef)]
            head_end = span(methods[0])[0] - 1 if methods else end
            add(stmt.name.value, "class", start, head_end)
            for meth in methods:
                add(f"{stmt.name.value}.{meth.name.value}", "method", *span(meth))
        else:
            rest.append(span(stmt))
    body = [n for s, e in rest for n in range(s, e + 1)]
    if body:
        text = "\n".join(lines[n - 1] for n in body if n - 1 < len(lines)).strip()
        if text:
            out.append(
                CodeChunk(repo, path, service, "<module>", "module", body[0], body[-1], text)
            )
    return out
