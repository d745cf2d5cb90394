"""A layered layout in pure Python: the symptom on the left, each hop from it a column to
the right, heavier nodes first in their column. Server-side, so the picture is in the HTML
and readable without script."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

__all__ = ["COLUMN_GAP", "ROW_GAP", "Link", "Placed", "extent", "link", "place"]

COLUMN_GAP = 250.0
ROW_GAP = 120.0
MARGIN_X = 110.0
MARGIN_Y = 70.0
R_MIN = 14.0
R_MAX = 40.0
MAX_ROWS = 8


@dataclass(frozen=True)
class Placed:
    x: float
    y: float
    r: float

    def rim(self, tx: float, ty: float, gap: float = 0.0) -> tuple[float, float]:
        """The point of the circle's rim (plus `gap`) facing (tx, ty)."""
        dx, dy = tx - self.x, ty - self.y
        d = math.hypot(dx, dy) or 1.0
        return (round(self.x + dx / d * (self.r + gap), 1),
                round(self.y + dy / d * (self.r + gap), 1))  # fmt: skip


class Link(BaseModel):
    """An edge as a quadratic curve from rim to rim, and where its label goes (a model, so
    the blame graph's edges extend it and the JSON route shows it)."""

    model_config = ConfigDict(frozen=True)

    x1: float
    y1: float
    cx: float
    cy: float
    x2: float
    y2: float
    lx: float
    ly: float


def link(a: Placed, b: Placed) -> Link:
    """Straight between columns; within a column a bow to the right, so the line does not
    run through the names drawn under the nodes in between."""
    if abs(a.x - b.x) < 1:
        cx, cy = a.x + 60 + abs(b.y - a.y) * 0.3, (a.y + b.y) / 2
    else:
        cx, cy = (a.x + b.x) / 2, (a.y + b.y) / 2
    x1, y1 = a.rim(cx, cy)
    x2, y2 = b.rim(cx, cy, gap=4)  # room for the arrow head
    lx, ly = 0.25 * x1 + 0.5 * cx + 0.25 * x2, 0.25 * y1 + 0.5 * cy + 0.25 * y2
    return Link(x1=x1, y1=y1, cx=round(cx, 1), cy=round(cy, 1), x2=x2, y2=y2,
                lx=round(lx, 1), ly=round(ly - 7, 1))  # fmt: skip


def place(layer: Mapping[str, int], weight: Mapping[str, float]) -> dict[str, Placed]:
    """Positions for every name: column by layer (a layer of more than MAX_ROWS names wraps
    into further columns), rows by weight (0..1, also the radius, area-proportional),
    columns centred on the tallest one."""
    layers: dict[int, list[str]] = {}
    for name, lay in layer.items():
        layers.setdefault(lay, []).append(name)
    columns: list[list[str]] = []
    for _, names in sorted(layers.items()):
        names.sort(key=lambda n: (-weight.get(n, 0.0), n))
        columns += [names[i : i + MAX_ROWS] for i in range(0, len(names), MAX_ROWS)]
    tallest = max((len(c) for c in columns), default=0)
    placed: dict[str, Placed] = {}
    for col, names in enumerate(columns):
        top = MARGIN_Y + (tallest - len(names)) * ROW_GAP / 2
        for row, name in enumerate(names):
            w = min(max(weight.get(name, 0.0), 0.0), 1.0)
            r = R_MIN + (R_MAX - R_MIN) * math.sqrt(w)
            placed[name] = Placed(MARGIN_X + col * COLUMN_GAP, top + row * ROW_GAP, round(r, 1))
    return placed


CHAR_W = 8.5
"""About the width of a character of the node labels (bold 14 px), for the canvas size."""


def extent(placed: Mapping[str, Placed], texts: Mapping[str, str]) -> tuple[float, float]:
    """A canvas (width, height) holding every node and the name written under it (centred
    on the node, so a long name reaches half its width to the right)."""
    width = max((p.x + max(p.r, len(texts.get(n, n)) * CHAR_W / 2) for n, p in placed.items()),
                default=0.0)  # fmt: skip
    height = max((p.y + p.r for p in placed.values()), default=0.0)
    return round(width + 40, 1), round(height + 60, 1)
