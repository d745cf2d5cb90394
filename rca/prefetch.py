"""Rows one combined query read, shared by the generators that each need part of them."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from stackgraph.store import GraphReader

from .facts import Request


def prefetched(
    store: GraphReader, req: Request, key: tuple[Any, ...], load: Callable[[], list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Rows one combined query read for this request, shared by the generators that need
    parts of them (khop + callers, changes + history): one round trip instead of two.

    Kept per request (dropped with it), so two investigations never share rows."""
    try:
        slot = _PREFETCH[id(req)]
    except KeyError:
        slot = _PREFETCH[id(req)] = {}
        try:
            weakref.finalize(req, _PREFETCH.pop, id(req), None)
        except TypeError:  # not weak-referenceable: read without sharing
            del _PREFETCH[id(req)]
            return load()
    full_key = (id(store), *key)
    rows = slot.get(full_key)
    if rows is None:
        rows = slot[full_key] = load()
    return rows


_PREFETCH: dict[int, dict[tuple[Any, ...], list[dict[str, Any]]]] = {}
