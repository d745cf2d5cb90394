"""Text that may travel: into a query, into the store, onto a screen.

FalkorDB cuts a query at a NUL (what follows is lost, or read as something else), a lone
surrogate cannot be encoded as UTF-8 (the redis client raises mid-write), and other control
characters rewrite a terminal or a log line. So one check, used at every boundary: the API's
schemas and the MCP tools refuse all three (422 or a tool error naming the field), the
query parameters and the writer refuse what cannot be stored, and each caps length.

    text_problem("checkout\\x00x")     # "contains a NUL character (U+0000) at index 8"
    text_problem("a" * 5000, 4096)    # "is 5000 characters, over the limit of 4096"
"""

from __future__ import annotations

import re

__all__ = [
    "MAX_KEY_CHARS",
    "MAX_LABEL_CHARS",
    "MAX_PROPERTY_CHARS",
    "MAX_TEXT_CHARS",
    "text_problem",
]

MAX_KEY_CHARS = 4096
"""A natural key's text (a name, a path, a route): no key of the schema needs more."""
MAX_PROPERTY_CHARS = 1 << 20
"""One stored string property (the largest, an incident's evidence, stays far below)."""
MAX_LABEL_CHARS = 1024
"""An alert label's name or value (Kubernetes names are at most 253)."""
MAX_TEXT_CHARS = 32 * 1024
"""Free text at the boundary: an annotation, a question, a summary."""

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
"""C0 controls except tab, newline and carriage return; DEL and C1; lone surrogates."""


def _what(ch: str) -> str:
    if ch == "\x00":
        return "a NUL character"
    if "\ud800" <= ch <= "\udfff":
        return "a lone surrogate"
    return "a control character"


def text_problem(value: str, max_chars: int | None = None, *, controls: bool = True) -> str | None:
    """Why `value` may not travel, or None. `controls=False` lets control characters other
    than NUL through (stored text read from files); NUL and lone surrogates never pass."""
    if max_chars is not None and len(value) > max_chars:
        return f"is {len(value)} characters, over the limit of {max_chars}"
    bad = (_UNSAFE if controls else _UNSTORABLE).search(value)
    if bad is None:
        return None
    ch = bad.group()
    return f"contains {_what(ch)} (U+{ord(ch):04X}) at index {bad.start()}"
