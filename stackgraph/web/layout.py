"""A layered layout in pure Python: the symptom on the left, each hop from it a column to
the right, heavier nodes first in their column. Server-side, so the picture is in the HTML
and readable without script."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["COLUMN_GAP", "ROW_GAP", "Placed", "place"]

COLUMN_GAP = 250.0
ROW_GAP = 120.0
MARGIN_X = 110.0
MARGIN_Y = 70.0
R_MIN = 14.0
R_MAX = 40.0


@dataclass(frozen=True)
class Placed:
    x: float
    y: float
    r: float

    def towards(self, other: Placed) -> tuple[float, float, float, float]:
        """The segment between the two circles' rims (arrows end at the rim, not inside)."""
        dx, dy = other.x - self.x, other.y - self.y
        d = math.hypot(dx, dy) or 1.0
        ux, uy = dx / d, dy / d
        end = other.r + 4  # leave room for the arrow head
        return (round(self.x + ux * self.r, 1), round(self.y + uy * self.r, 1),
                round(other.x - ux * end, 1), round(other.y - uy * end, 1))  # fmt: skip


def place(layer: Mapping[str, int], weight: Mapping[str, float]) -> dict[str, Placed]:
    """Positions for every name: column by layer, rows by weight (0..1, also the radius,
    area-proportional), columns centred on the tallest one."""
    columns: dict[int, list[str]] = {}
    for name, lay in layer.items():
        columns.setdefault(lay, []).append(name)
    tallest = max((len(c) for c in columns.values()), default=0)
    placed: dict[str, Placed] = {}
    for col, (_, names) in enumerate(sorted(columns.items())):
        names.sort(key=lambda n: (-weight.get(n, 0.0), n))
        top = MARGIN_Y + (tallest - len(names)) * ROW_GAP / 2
        for row, name in enumerate(names):
            w = min(max(weight.get(name, 0.0), 0.0), 1.0)
            r = R_MIN + (R_MAX - R_MIN) * math.sqrt(w)
            placed[name] = Placed(MARGIN_X + col * COLUMN_GAP, top + row * ROW_GAP, round(r, 1))
    return placed
